"""Org samples for tests: the example vault's inventory and a big-file generator.

The example vault ``examples/roam/`` is both the bundled example notes and the fixture
vault of the pytest and ERT suites. Keep it pure org; describe it here.

Files (node IDs in :data:`IDS`; "file" = file node, "heading" = heading node):

- ``sourdough-baking.org`` "Sourdough Baking" (file, tags baking bread). Headings:
  "Starter maintenance" (heading node, ROAM_ALIASES "Levain care" Levain, CREATED
  2024-02-10) > "Feeding schedule" (table) and "Reviving a sluggish starter";
  "Bulk fermentation" (links Baker's percentages); "Shaping and scoring";
  "TODO Try a dutch oven bake at 250 degrees". Links to Bread Hydration.
- ``bread-hydration.org`` "Bread Hydration" (file, alias "Dough hydration"). Headings:
  "Baker's percentages" (heading node, table); "High hydration doughs" > "Stretch and
  folds", "Autolyse". Links to Sourdough Baking.
- ``rust-ownership.org`` "Rust Ownership" (file): "Move semantics" (heading node, rust src
  block), "Borrowing and references" (links Lifetimes), "Drop and RAII".
- ``rust-borrow-checker.org`` "Borrow Checker" (file, alias borrowck): "Lifetimes"
  (heading node, src) > "Lifetime elision"; "Common borrow checker errors" (src).
- ``gardening-tomatoes.org`` "Growing Tomatoes" (file, tag garden): "Seed starting",
  "Varieties I grow" (table), "TODO Pruning suckers" (:weekly:), "Blight and diseases"
  (heading node).
- ``sqlite-indexing.org`` "SQLite Indexing" (file, ROAM_REFS the query planner page):
  "B-tree indexes", "Covering indexes" (heading node), "EXPLAIN QUERY PLAN" (sql src),
  "FTS5 full text search".
- ``design-of-everyday-things.org`` "Reading: The Design of Everyday Things" (file, book
  reading note, ROAM_REFS @norman2013design, aliases): "Affordances and signifiers"
  (heading node), "Mappings and feedback", "Human error" > "Quotes" (quote block).
- ``emacs-config.org`` "Emacs Configuration" (file): "Package management" (elisp src),
  "Org-roam setup" (heading node; an ``org`` src block whose ``* TODO Review the inbox`` and
  ``** Links from today`` lines are headings, as in Org), "Keybindings" (table),
  "Server credentials" :crypt: with a PGP block (word ``zanzibarsecret``; its ID
  :data:`CRYPT_ID` and its child "Backup codes" must never be indexed).
- ``journal/2024-03-01.org`` "2024-03-01" (file, date from the file name): "Baked a
  sourdough loaf" (links Baker's percentages and Sourdough Baking), "Fixed a borrow
  checker error" :rust: (links Borrow Checker), "Private thoughts" :private: > "Even
  more private" (word ``privatepelican``), "Meeting with Sam <2024-03-01 Fri 14:00>".
- ``journal/2024-03-02.org`` "2024-03-02" (file, **CRLF** line endings): "Planted tomato
  seedlings" (links Growing Tomatoes) > "Seedling checklist"; "Read a chapter of Norman"
  (links Affordances and signifiers).
- ``projects/arcology.org`` "Arcology Oracle Project" (file, links SQLite Indexing):
  "Retrieval design" (heading node) > "TODO Evaluate embedding models"; "Demo day" (an
  **invalid date** ``<2025-02-30 Sun>``); "Scratch ideas" (ROAM_EXCLUDE, word
  ``excludedwombat``, ID :data:`EXCLUDED_ID`) > "Wild idea"; "Milestones".
- ``private-diary.org`` "Diary" with ``#+filetags: :private:`` (word ``privatefiletag``):
  yields no headings at all.
- ``coffee-brewing.org`` "Coffee Brewing" (file; messy drawers): "Pour-over recipe" (a
  property drawer after body text: read as text), "Grinder settings" (an unclosed
  LOGBOOK drawer), "Dialing in extraction" (an **unclosed** PROPERTIES drawer holding
  an ID: not a node, as in Org; one problem recorded).
- ``creme-brulee.org`` "Creme brulee" (file; Latin-1 bytes, **invalid UTF-8**): "Custard",
  "Caramel top".
- ``日本語ノート.org`` "日本語の勉強" (file; **CJK file name**): "ひらがなとカタカナ", "漢字".
- ``inbox.org`` "Inbox" (**no ID**: node_id None everywhere): three one-line headings.
- ``empty.org``: **empty**, yields no headings.

Intended related pairs (linked both ways or sharing vocabulary):
Sourdough Baking <-> Bread Hydration; Rust Ownership <-> Borrow Checker; Growing
Tomatoes <-> journal 2024-03-02 "Planted tomato seedlings"; SQLite Indexing <->
Arcology Oracle Project; Design of Everyday Things <-> journal 2024-03-02 "Read a chapter
of Norman". Coffee Brewing, Creme brulee, 日本語の勉強 and Emacs Configuration stand alone.
:data:`EXAMPLE_QUERIES` maps queries to the heading expected first.
"""

from __future__ import annotations

import random
from pathlib import Path

VAULT = Path(__file__).resolve().parent.parent / "examples" / "roam"

IDS = {
    "sourdough": "adda0990-28e8-487f-ae0a-eda5a8987581",
    "starter": "612f2887-9442-410d-b965-d901189a423b",
    "hydration": "36fb47dd-e96a-4b44-80ce-b246a771f11d",
    "bakers_percentages": "8d1398ec-2d9c-407d-98e9-ceb8407aa740",
    "rust_ownership": "d00ab0f6-4c4f-4f9f-9c7b-4386f9381cef",
    "move_semantics": "4d915a9e-69b5-45de-bf9f-df9a9420bfa1",
    "borrow_checker": "dce149d8-609b-4adc-85ea-25e218b8075e",
    "lifetimes": "55895608-8735-49d4-9756-63fa8036bd55",
    "tomatoes": "08a64bfc-ad2e-450f-9d55-87db5fcbe2ea",
    "blight": "c91ae1a2-a193-4ab9-8fd2-8d7ed9e01ac4",
    "sqlite": "46f62ed1-f7f7-4a32-9247-aca9432ad0a6",
    "covering_indexes": "f8834be1-a765-4d85-b77b-39b6bca1dc9a",
    "doet": "831e5f02-caf3-4b72-8c96-101c18a27c48",
    "affordances": "e0e5b7c4-c76d-4740-a2c7-c1492ae7427d",
    "emacs_config": "503d98df-0d40-4b47-bda2-cff8a8a7c397",
    "org_roam_setup": "46dd9c47-7ec2-44e0-8574-6b39cf00cc32",
    "journal_0301": "82d51f3b-e80f-480b-be14-813a52374265",
    "journal_0302": "eb0fd47f-b6a3-4e95-aac8-739e1f69cc7f",
    "arcology": "475a2766-a3b1-4479-bc8b-43fcb59416b1",
    "retrieval_design": "c7ad03a3-223f-4329-8bc3-b13bf893090c",
    "coffee": "67f94a3f-6549-4356-a04e-da972ad8815e",
    "creme_brulee": "24844e83-5c48-40e9-816e-17b1ff9cb313",
    "japanese": "8549d3c2-e016-4e2a-b61e-3ac5c9119564",
}
CRYPT_ID = "c088a9d0-8ebc-4551-a90f-4daba43e422b"  # the :crypt: heading: never indexed
EXCLUDED_ID = "dd8a9f11-e152-459a-b3e8-a52755ef38e8"  # the ROAM_EXCLUDE heading
PRIVATE_DIARY_ID = "d459580b-4a76-4bdc-b2cb-36b33a2c8f0f"  # file with :private: filetags
UNCLOSED_DRAWER_ID = "0f3c2e1d-9a8b-4c7d-8e6f-5a4b3c2d1e0f"  # in an unclosed drawer: not a node

# Words that must never appear in anything read from the vault (index, results, prompts).
SECRET_WORDS = ("zanzibarsecret", "excludedwombat", "privatepelican", "privatefiletag")
NEVER_INDEXED_IDS = (CRYPT_ID, EXCLUDED_ID, PRIVATE_DIARY_ID)  # appear nowhere at all

# ((file, heading title or None for the file-level record), (file, heading)) meant to be
# found together: with the fake embedder (tests/fakes), the second file is among the two
# files most similar to the first (best chunk cosine), usually the first.
RELATED_PAIRS = (
    (("sourdough-baking.org", None), ("bread-hydration.org", None)),
    (("rust-ownership.org", None), ("rust-borrow-checker.org", None)),
    (("gardening-tomatoes.org", None), ("journal/2024-03-02.org", "Planted tomato seedlings")),
    (("sqlite-indexing.org", None), ("projects/arcology.org", None)),
    (("design-of-everyday-things.org", "Affordances and signifiers"),
     ("journal/2024-03-02.org", "Read a chapter of Norman")),
)  # fmt: skip

# query -> (file, heading title; the file title for the file-level record) expected as the
# top chunk with the fake embedder (hashed bag of words), checked in tests/notes/test_orgreader.py.
EXAMPLE_QUERIES = {
    "bread hydration water flour baker's percentage": ("bread-hydration.org", "Baker's percentages"),
    "feeding the sourdough starter levain": ("sourdough-baking.org", "Starter maintenance"),
    "borrow checker lifetime annotations dangling references": ("rust-borrow-checker.org", "Lifetimes"),
    "tomato late blight brown leaves": ("gardening-tomatoes.org", "Blight and diseases"),
    "sqlite covering index": ("sqlite-indexing.org", "Covering indexes"),
    "door affordance signifier": ("design-of-everyday-things.org", "Affordances and signifiers"),
    "coffee bloom slow spirals brew time": ("coffee-brewing.org", "Pour-over recipe"),
    "pour-over coffee V60 grind size": ("coffee-brewing.org", "Coffee Brewing"),  # the file-level record
}

BIG_SECRET = "bigfilesecretword"  # only inside :private: headings of the big file


def big_org_bytes(target_bytes: int = 2_000_000, seed: int = 0) -> bytes:
    """A deterministic, messy org file of about ``target_bytes`` (default 2 MB).

    Nested headings (levels 1-5) with IDs, tags, TODOs, links, property drawers, src
    blocks holding ``*`` lines, tables, a long LaTeX block, very long lines, invalid
    dates and CRLF-free text. Every 97th heading is tagged ``:private:`` and holds
    :data:`BIG_SECRET`. Each ``* `` line (also inside src blocks) is a heading.
    """
    rng = random.Random(seed)
    words = (
        "flour water starter ownership borrow lifetime tomato blight index query planner "
        "emacs org roam heading drawer table latex matrix garden kitchen coffee grind"
    ).split()
    out = [
        ":PROPERTIES:\n:ID:       00000000-0000-4000-8000-000000000000\n:END:\n",
        "#+title: Big generated file\n#+filetags: :big:\n\nPreamble text.\n",
    ]
    size = sum(map(len, out))
    level = 1
    i = 0
    while size < target_bytes:
        i += 1
        level = max(1, min(5, level + rng.choice((-2, -1, 0, 0, 1, 1))))
        tags = f" :t{i % 7}:" if i % 3 == 0 else ""
        if i % 97 == 0:
            tags = " :private:"
        todo = "TODO " if i % 11 == 0 else ""
        parts = [f"{'*' * level} {todo}Heading {i} {rng.choice(words)}{tags}\n"]
        if i % 4 == 0:
            parts.append(f":PROPERTIES:\n:ID:       {i:08d}-0000-4000-8000-{i:012d}\n:END:\n")
        para = " ".join(rng.choice(words) for _ in range(rng.randint(20, 90)))
        parts.append(f"{para} [[id:{(i // 2):08d}-0000-4000-8000-{(i // 2):012d}][link {i}]].\n\n")
        if i % 97 == 0:
            parts.append(f"{BIG_SECRET} lives here.\n")
        if i % 13 == 0:
            parts.append("#+begin_src org\n* not really a heading\n** nor this\n#+end_src\n")
        if i % 17 == 0:
            parts.append("| a | b |\n|---+---|\n| 1 | 2 |\n")
        if i % 29 == 0:
            parts.append("\\begin{equation}\n" + " + ".join(f"x_{{{k}}}" for k in range(400)) + "\n\\end{equation}\n")
        if i % 41 == 0:
            parts.append("long " * 4000 + "\n")
        if i % 53 == 0:
            parts.append("Meeting <2025-02-30 Sun> and [2024-01-01 Mon 25:00].\n")
        chunk = "".join(parts)
        out.append(chunk)
        size += len(chunk)
    return "".join(out).encode("utf-8")
