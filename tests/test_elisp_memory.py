"""elisp/arcology-oracle-memory.el: its ERT suite against the real daemon (token, real
watcher, real files; Emacs's own lock files), byte-compilation with warnings as errors,
and checkdoc. Runs like tests/test_elisp.py, whose helpers it uses."""

from __future__ import annotations

from tests.conftest import start_daemon, wait_until
from tests.test_elisp import CHECKDOC, ELISP, TOKEN, WITH_PACKAGES, emacs, emacs_env, require_packages, run_emacs

SOURCE = ELISP / "arcology-oracle-memory.el"
ERT_FILE = ELISP / "test" / "arcology-oracle-memory-test.el"

COMPILE = """
(progn
  (setq byte-compile-error-on-warn t
        byte-compile-dest-file-function
        (lambda (source) (expand-file-name (concat (file-name-base source) ".elc") (getenv "ELC_DIR"))))
  (kill-emacs (if (byte-compile-file (getenv "SOURCE")) 0 1)))
"""


async def test_memory_ert_against_real_daemon(tmp_path, roam_dir, fake_ollama):
    emacs()
    require_packages()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN)
    try:

        async def indexed():
            status, body = await daemon.get_json("/status")
            return status == 200 and body["headings"] > 0 and not body["indexing"]["running"]

        await wait_until(indexed, timeout=60, interval=0.1)
        env = emacs_env(
            tmp_path,
            ARCOLOGY_ORACLE_TEST_URL=daemon.url,
            ARCOLOGY_ORACLE_TEST_TOKEN=TOKEN,
            ARCOLOGY_ORACLE_TEST_ROAM=str(roam_dir),
        )
        code, output = await run_emacs(
            ["--eval", WITH_PACKAGES, "-L", str(ELISP), "-l", "ert", "-l", str(ERT_FILE),
             "-f", "ert-run-tests-batch-and-exit"],
            env=env,
        )  # fmt: skip
    finally:
        daemon.stop()
    assert code == 0, f"ERT failed (exit {code}):\n{output}\n--- daemon log ---\n{daemon.log()}"
    assert "Ran 5 tests, 5 results as expected, 0 unexpected" in output, output


async def test_memory_byte_compiles_without_warnings_and_checkdoc_is_clean(tmp_path):
    env = emacs_env(tmp_path, ELC_DIR=str(tmp_path), SOURCE=str(SOURCE))
    code, output = await run_emacs(["-L", str(ELISP), "--eval", COMPILE], env=env)
    assert code == 0, f"byte-compilation failed or warned:\n{output}"
    assert (tmp_path / "arcology-oracle-memory.elc").exists()
    code, output = await run_emacs(["--eval", CHECKDOC], env=env)
    assert code == 0, f"checkdoc found problems:\n{output}"
