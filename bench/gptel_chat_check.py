"""A chat written by the real gptel, saved as org, is read as dialogue (not part of the suite).

    python bench/gptel_chat_check.py --gptel /path/to/gptel [--compat /path/to/compat] [--stream]

gptel and compat (gptel.el needs it on Emacs 28) are never committed here: give
checkouts or bare git repositories of them (see ``gptel_tools_check.gptel_source``).
Batch Emacs opens a new org file in a temporary roam directory, turns on ``gptel-mode``
with an Ollama backend pointing at the fake Ollama, writes a prompt with non-ASCII text,
sends it with ``gptel-send``, waits (in elisp, on ``gptel-post-response-functions``,
with a timeout) for the reply, sends a second prompt, and saves (gptel writes
``GPTEL_BOUNDS`` and its other properties on save). Then the real daemon indexes that
directory and the check reads the turns the reader made of the file and ``/recall``'s
window of it.

It passes when the turns are user, model, user, model with the prompts as the user's and
the fake's replies as the model's, and ``/recall`` shows the chat with those speakers.
Prints what it saw; exits 1 on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO  # also puts the repository on sys.path
from gptel_tools_check import gptel_source

from arcology_oracle.index.parsing import ParseOptions, parse_note  # noqa: E402
from tests.answers.test_recall import post  # noqa: E402
from tests.conftest import start_daemon  # noqa: E402
from tests.fakes.fake_ollama import running_fake_ollama  # noqa: E402

MODEL = "llama3.2"
PROMPTS = ["Which flour for a café 日本 style milk bread loaf?", "And how long should the tangzhong rest?"]
# The fake's replies, by how many user messages the chat holds (plain text: gptel turns
# a reply's markdown into org, and this compares the text as saved).
REPLIES = ["Use bread flour — crème fraîche 牛乳 helps the crumb.", "Let the tangzhong cool for 30 minutes.\n\nThen knead it in, 日本 style."]


def reply(messages: list[dict]) -> str:
    return REPLIES[min(sum(m.get("role") == "user" for m in messages), len(REPLIES)) - 1]

EMACS_SCRIPT = r"""
(progn
  (prefer-coding-system 'utf-8)
  (require 'gptel)
  (require 'gptel-org)
  (require 'gptel-ollama)
  (let ((prompts (json-read-file (getenv "PROMPTS_FILE")))
        (stream (and (getenv "STREAM") t)))
    (setq gptel-use-curl t
          gptel-stream stream
          gptel-backend (gptel-make-ollama "fake-ollama"
                          :host (getenv "OLLAMA_HOSTPORT") :stream stream :models '(llama3.2))
          gptel-model 'llama3.2)
    (defvar check--done nil)
    (add-hook 'gptel-post-response-functions (lambda (&rest _) (setq check--done t)))
    (defun check--wait ()
      (let ((deadline (+ (float-time) 30)))
        (while (and (not check--done) (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (unless check--done (princ "EVENT timeout\n") (kill-emacs 2))
      (setq check--done nil))
    (find-file (getenv "CHAT_FILE"))
    (insert "#+title: Bread chat\n\n")
    (gptel-mode 1)
    (goto-char (point-max))
    (insert "*** " (aref prompts 0))
    (gptel-send)
    (check--wait)
    (goto-char (point-max))
    ;; gptel puts its org prompt prefix after a response; write one if it did not.
    (unless (save-excursion (forward-line 0) (looking-at-p "\\*+ ")) (insert "\n\n*** "))
    (insert (aref prompts 1))
    (gptel-send)
    (check--wait)
    (save-buffer)
    (princ (format "EVENT saved %s\n" gptel-version))
    (kill-emacs 0)))
"""


async def run(gptel: Path, compat: Path | None, stream: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "g").mkdir()
        source = gptel_source(gptel, tmp / "g")
        load = ["-L", str(source)]
        if compat:
            (tmp / "c").mkdir()
            load += ["-L", str(gptel_source_any(compat, tmp / "c"))]
        roam = tmp / "roam"
        roam.mkdir()
        chat = roam / "bread-chat.org"
        (tmp / "prompts.json").write_text(json.dumps(PROMPTS, ensure_ascii=False))
        async with running_fake_ollama() as fake:
            fake.state.configure({"chat_reply": reply})
            env = {
                "HOME": str(tmp), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "OLLAMA_HOSTPORT": fake.url.removeprefix("http://"), "CHAT_FILE": str(chat),
                "PROMPTS_FILE": str(tmp / "prompts.json"), **({"STREAM": "1"} if stream else {}),
            }  # fmt: skip
            proc = await asyncio.create_subprocess_exec(
                "emacs", "-Q", "--batch", *load, "--eval", EMACS_SCRIPT, env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            chats = fake.state.chats
            saved = chat.read_bytes() if chat.exists() else b""
            recall = None
            if saved:
                daemon = await start_daemon(tmp, roam_dir=roam, ollama_url=fake.url, embedded=True)
                try:
                    recall = await post(daemon, "/recall", {"question": "flour milk bread tangzhong rest"})
                finally:
                    daemon.stop()
    return {"exit": proc.returncode, "output": out.decode(errors="replace"), "saved": saved, "chats": chats, "recall": recall}


def gptel_source_any(path: Path, tmp: Path) -> Path:
    """A directory of PATH's files: PATH, or its HEAD exported when it is a bare git repository."""
    if (path / "HEAD").exists() and (path / "objects").is_dir():
        archive = subprocess.run(["git", "--git-dir", str(path), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        return tmp
    return path


def verdict(found: dict) -> list[str]:
    problems = []
    if found["exit"] != 0 or not found["saved"]:
        return [f"emacs exit {found['exit']}, saved {len(found['saved'])} bytes"]
    replies = [reply(messages) for messages in found["chats"]]
    print(f"model requests: {len(replies)}")
    _, chunks = parse_note(found["saved"], "bread-chat.org", ParseOptions(frozenset({"private"}), 2000, 200))
    turns = [t for c in chunks for t in (c[0].dialogue or ())]
    got = [(t.speaker, t.text) for t in turns]
    want = [("user", f"user: {PROMPTS[0]}"), (MODEL, f"{MODEL}: {replies[0]}"), ("user", f"user: {PROMPTS[1]}"), (MODEL, f"{MODEL}: {replies[1]}")]  # fmt: skip
    print("turns read:")
    for speaker, text in got:
        print(f"  {text!r}")
    if got != want:
        problems.append(f"turns: {got} != {want}")
    status, body = found["recall"]
    note = next((n for n in body.get("notes", []) if n.get("file") == "bread-chat.org"), None) if status == 200 else None
    print(f"/recall {status}: window speakers {note and note['speakers']}\n  {note and note['text']!r}")
    if not note or note["speakers"] != ["user", MODEL] or f"user: {PROMPTS[0]}\n\n{MODEL}: {replies[0]}" not in note["text"]:
        problems.append(f"/recall window: {note}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gptel", type=Path, required=True, help="gptel checkout or bare git repository")
    parser.add_argument("--compat", type=Path, help="compat checkout or bare git repository (Emacs < 29)")
    parser.add_argument("--stream", action="store_true", help="let gptel stream the responses")
    args = parser.parse_args()
    found = asyncio.run(run(args.gptel, args.compat, args.stream))
    print("--- the file gptel saved ---\n" + found["saved"].decode(errors="replace") + "--- end ---")
    problems = verdict(found)
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems) + "\n--- emacs output ---\n" + found["output"][-4000:])
        sys.exit(1)
    print("OK: the gptel chat is read as user / model dialogue, split where GPTEL_BOUNDS says")


if __name__ == "__main__":
    main()
