"""The Emacs package (elisp/arcology-oracle*.el): its ERT suite against the real daemon
and a fake Ollama. Byte-compilation, checkdoc and package-lint are in test_elisp_lint.py.

Needs ``emacs`` (Debian: emacs-nox) with the org-roam and magit-section packages
(elpa-org-roam, elpa-magit-section); ``scripts/setup-test-deps`` installs them. Nothing is skipped: a
missing Emacs fails with a message saying what to install.
"""

from __future__ import annotations

from tests.elisp_recordings import REQUESTS, RESPONSES, record_all, shape
from tests.emacs_batch import ELISP, WITH_PACKAGES, emacs, emacs_env, require_packages, run_emacs
from tests.runners import start_daemon

ERT_DIR = ELISP / "test"
HTTP_ERT_FILE = ERT_DIR / "arcology-oracle-http-test.el"
# Every other ERT file runs against the daemon (a new part's tests are picked up); they
# share the fixtures of arcology-oracle-test.el, which each requires.
DAEMON_ERT_FILES = sorted(set(ERT_DIR.glob("arcology-oracle*-test.el")) - {HTTP_ERT_FILE})
TOKEN = "elisp-test-token"


async def test_ert_suite_against_real_daemon(tmp_path, roam_dir, fake_ollama):
    """The ERT files of the package and of its parts (the gptel tools among them),
    against ``arcology-oracle serve`` with a token."""
    emacs()
    require_packages()
    # The tests that hang the embedder wait out search_embed_wait (8 s by default) before
    # the keyword answer; 2 s is still far above a fake embedding's milliseconds.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN, embedded=True,
                                env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "2"})  # fmt: skip
    try:
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        env = emacs_env(
            tmp_path,
            ARCOLOGY_ORACLE_TEST_URL=daemon.url,
            ARCOLOGY_ORACLE_TEST_TOKEN=TOKEN,
            ARCOLOGY_ORACLE_TEST_ROAM=str(roam_dir),
            ARCOLOGY_ORACLE_TEST_OLLAMA=fake_ollama.url,
            ARCOLOGY_ORACLE_TEST_TMP=str(scratch),
        )
        code, output = await run_emacs(
            ["--eval", WITH_PACKAGES, "-L", str(ELISP), "-L", str(ERT_DIR), "-l", "ert",
             *(arg for f in DAEMON_ERT_FILES for arg in ("-l", str(f))), "-f", "ert-run-tests-batch-and-exit"],
            env=env,
        )  # fmt: skip
    finally:
        daemon.stop()
    assert code == 0, f"ERT failed (exit {code}):\n{output}\n--- daemon log ---\n{daemon.log()}"
    assert "0 unexpected" in output, output
    assert "arcology-oracle-gptel-test-search-notes" in output, "the gptel part's tests did not run"


async def test_http_client_on_recorded_responses(tmp_path):
    """The HTTP client's ERT file: its parser on split bytes and the whole client over a
    local socket replaying the daemon's recorded answers. No daemon, no Ollama, no
    optional package."""
    code, output = await run_emacs(
        ["-L", str(ELISP), "-L", str(ERT_DIR), "-l", "ert", "-l", str(HTTP_ERT_FILE),
         "-f", "ert-run-tests-batch-and-exit"],
        env=emacs_env(tmp_path),
    )  # fmt: skip
    assert code == 0, f"ERT failed (exit {code}):\n{output}"
    assert "0 unexpected" in output, output
    assert "recorded-ndjson-stream" in output, output


async def test_recorded_responses_match_the_daemon(tmp_path, roam_dir, fake_ollama):
    """The recordings still stand for the daemon: each request, sent now, gets an answer
    of the recorded status, content type, framing and JSON keys (or event types).
    Re-record with ``python -m tests.elisp_recordings`` when the API changes."""
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN, embedded=True)
    try:
        live = await record_all(daemon.url, TOKEN)
    finally:
        daemon.stop()
    assert set(live) == set(REQUESTS)
    for name, raw in live.items():
        recorded = (RESPONSES / f"{name}.http").read_bytes()
        assert shape(raw) == shape(recorded), f"{name}.http no longer matches the daemon"
