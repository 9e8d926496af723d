"""Real gptel calls the notes tools through its own tool-use loop (not part of the suite).

    python bench/gptel_tools_check.py --gptel /path/to/gptel [--no-curl]

gptel is not packaged for Debian and its source is never committed here: give a gptel
checkout, or a bare git repository of it (its HEAD is exported to a temporary
directory), outside this repository. The check starts the fake Ollama, told to answer a
chat that offers tools with calls to search_notes, read_note and similar_notes, and the
real daemon on a copy of the example vault (with a token). Then batch Emacs loads gptel
and this package, makes a gptel Ollama backend pointing at the fake, puts
``(arcology-oracle-gptel-tools)`` in ``gptel-tools`` and sends one ``gptel-request``.
gptel parses the tool calls, runs the tools (which ask the daemon), sends their results
back, and the fake's final reply quotes them.

It passes when gptel offered the three tools to the model, ran each once, sent back
results holding ``[[id:...]]`` links to the expected notes, and handed the final reply
to the request's callback. Prints what it saw; writes bench/results/gptel_tools_check.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, RESULTS  # also puts the repository on sys.path

from tests.conftest import EXAMPLE_ROAM, start_daemon  # noqa: E402
from tests.fakes.fake_ollama import running_fake_ollama  # noqa: E402
from tests.org_samples import IDS  # noqa: E402

TOKEN = "gptel-check-token"
QUESTION = "What do my notes say about feeding a sourdough starter?"
CALLS = [
    {"name": "search_notes", "arguments": {"query": "sourdough starter", "k": 3}},
    {"name": "read_note", "arguments": {"id": IDS["sourdough"]}},
    {"name": "similar_notes", "arguments": {"id": IDS["hydration"], "k": 3}},
]
# What each tool's result must hold: a link to a note the example vault has there.
EXPECTED = {
    "search_notes": f"[[id:{IDS['sourdough']}][Sourdough Baking]]",
    "read_note": f"[[id:{IDS['sourdough']}][Sourdough Baking]] (sourdough-baking.org:1)",
    "similar_notes": f"[[id:{IDS['sourdough']}][Sourdough Baking › Bulk fermentation]]",
}

# One JSON line per event on stdout, prefixed with EVENT.
EMACS_SCRIPT = r"""
(progn
  (require 'json)
  ;; gptel-request is gptel's core (gptel.el itself needs Emacs 29 or compat).
  (require 'gptel-request)
  (require 'gptel-ollama)
  (require 'arcology-oracle)
  (defun check--event (type &rest data)
    (princ (concat "EVENT " (json-encode (append (list (cons 'type type)) data)) "\n")))
  (setq arcology-oracle-url (getenv "DAEMON_URL")
        arcology-oracle-token (getenv "DAEMON_TOKEN")
        gptel-use-curl (not (getenv "NO_CURL")))
  (let* ((backend (gptel-make-ollama "fake-ollama"
                    :host (getenv "OLLAMA_HOSTPORT") :stream nil :models '(llama3.2)))
         (gptel-backend backend)
         (gptel-model 'llama3.2)
         (gptel-use-tools t)
         (gptel-confirm-tool-calls nil)
         (gptel-tools (arcology-oracle-gptel-tools))
         (done nil)
         (deadline (+ (float-time) 60)))
    (check--event "tools" (cons 'names (mapcar #'gptel-tool-name gptel-tools))
                  (cons 'gptel_version (bound-and-true-p gptel-version))
                  (cons 'curl (and gptel-use-curl t)))
    (with-temp-buffer
      (gptel-request (getenv "QUESTION")
        :stream nil
        :callback
        (lambda (response info)
          (pcase response
            ((pred stringp) (check--event "response" (cons 'text response)) (setq done t))
            (`(tool-call . ,calls) (check--event "tool-call-pending" (cons 'n (length calls))))
            (`(tool-result . ,results)
             (check--event "tool-result"
                           (cons 'results
                                 (mapcar (lambda (r)
                                           (list (cons 'name (gptel-tool-name (car r)))
                                                 (cons 'args (format "%S" (cadr r)))
                                                 (cons 'result (format "%s" (caddr r)))))
                                         results))))
            ('nil (check--event "error" (cons 'status (format "%S" (plist-get info :status)))
                                (cons 'error (format "%S" (plist-get info :error))))
                  (setq done t))
            (_ (check--event "other" (cons 'value (format "%S" response)))))))
      (while (and (not done) (< (float-time) deadline))
        (accept-process-output nil 0.05)))
    (unless done (check--event "timeout"))
    (kill-emacs (if done 0 2))))
"""


def gptel_source(path: Path, tmp: Path) -> Path:
    """A directory holding gptel's .el files: PATH itself, or PATH's HEAD exported when
    PATH is a bare git repository."""
    path = path.resolve()
    if path == REPO or REPO in path.parents:
        sys.exit("gptel must come from outside this repository")
    if (path / "gptel-request.el").exists() or (path / "gptel.el").exists():
        return path
    out = tmp / "gptel"
    out.mkdir()
    archive = subprocess.run(["git", "--git-dir", str(path), "archive", "HEAD"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


async def run(gptel: Path, no_curl: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        source = gptel_source(gptel, tmp)
        commit = subprocess.run(
            ["git", "--git-dir", str(gptel), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip() if not (gptel / "gptel.el").exists() else None  # fmt: skip
        roam = tmp / "roam"
        shutil.copytree(EXAMPLE_ROAM, roam, symlinks=True)
        async with running_fake_ollama() as fake:
            daemon = await start_daemon(tmp, roam_dir=roam, ollama_url=fake.url, token=TOKEN, embedded=True)
            try:
                fake.state.configure({"chat_tool_calls": CALLS})
                fake.state.clear_records()
                env = {
                    "HOME": str(tmp), "PATH": "/usr/bin:/bin", "DAEMON_URL": daemon.url, "DAEMON_TOKEN": TOKEN,
                    "OLLAMA_HOSTPORT": fake.url.removeprefix("http://"), "QUESTION": QUESTION,
                    **({"NO_CURL": "1"} if no_curl else {}),
                }  # fmt: skip
                proc = await asyncio.create_subprocess_exec(
                    "emacs", "-Q", "--batch", "-L", str(source), "-L", str(REPO / "elisp"),
                    "--eval", EMACS_SCRIPT, env=env,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                )  # fmt: skip
                out, _ = await asyncio.wait_for(proc.communicate(), 120)
                chats = [r for r in fake.state.requests["/api/chat"]]
            finally:
                daemon.stop()
    output = out.decode(errors="replace")
    events = [json.loads(line[6:]) for line in output.splitlines() if line.startswith("EVENT ")]
    return {"exit": proc.returncode, "gptel_commit": commit, "events": events, "chats": chats, "output": output}


def verdict(found: dict) -> list[str]:
    """What went wrong, if anything."""
    problems = []
    events, chats = found["events"], found["chats"]
    tools = next((e for e in events if e["type"] == "tools"), None)
    if not tools or tools["names"] != ["search_notes", "read_note", "similar_notes"]:
        problems.append(f"tools made: {tools}")
    offered = [sorted(t["function"]["name"] for t in c.get("tools", [])) for c in chats]
    if not offered or offered[0] != ["read_note", "search_notes", "similar_notes"]:
        problems.append(f"tools offered to the model: {offered}")
    results = [r for e in events if e["type"] == "tool-result" for r in e["results"]]
    if sorted(r["name"] for r in results) != sorted(EXPECTED):
        problems.append(f"tools run: {[r['name'] for r in results]}")
    for r in results:
        if EXPECTED.get(r["name"], "\0") not in r["result"]:
            problems.append(f"{r['name']} result lacks {EXPECTED.get(r['name'])!r}: {r['result'][:300]!r}")
    sent_back = [m["content"] for c in chats for m in c.get("messages", []) if m.get("role") == "tool"]
    if len(sent_back) != 3 or not all("[[id:" in s for s in sent_back):
        problems.append(f"tool results sent back to the model: {sent_back}")
    final = [e["text"] for e in events if e["type"] == "response"]
    if not final or not final[-1].startswith("From the tools: ") or "[[id:" not in final[-1]:
        problems.append(f"final reply: {final}")
    if found["exit"] != 0:
        problems.append(f"emacs exit {found['exit']}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gptel", type=Path, required=True, help="gptel checkout or bare git repository")
    parser.add_argument("--no-curl", action="store_true", help="make gptel use url-retrieve instead of curl")
    args = parser.parse_args()
    found = asyncio.run(run(args.gptel, args.no_curl))
    problems = verdict(found)
    for event in found["events"]:
        shown = {k: (v[:160] + "…" if isinstance(v, str) and len(v) > 160 else v) for k, v in event.items()}
        print(json.dumps(shown, ensure_ascii=False))
    print(f"model requests: {len(found['chats'])}; gptel commit: {found['gptel_commit']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "gptel_tools_check.json"
    out.write_text(json.dumps({**found, "problems": problems}, indent=1, ensure_ascii=False))
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems) + "\n--- emacs output ---\n" + found["output"][-4000:])
        sys.exit(1)
    print(f"OK: gptel ran the three notes tools in its tool-use loop; details in {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
