"""The Emacs package (elisp/arcology-oracle*.el): its ERT suite against the real daemon
and a fake Ollama. Byte-compilation, checkdoc and package-lint are in test_elisp_lint.py.

Needs ``emacs`` (Debian: emacs-nox) with the org-roam and magit-section packages
(elpa-org-roam, elpa-magit-section); ``.ci/run`` installs them. Nothing is skipped: a
missing Emacs fails with a message saying what to install.
"""

from __future__ import annotations

from tests.conftest import start_daemon, wait_until
from tests.emacs_batch import ELISP, WITH_PACKAGES, emacs, emacs_env, require_packages, run_emacs

ERT_FILE = ELISP / "test" / "arcology-oracle-test.el"
TOKEN = "elisp-test-token"


async def test_ert_suite_against_real_daemon(tmp_path, roam_dir, fake_ollama):
    """The whole ERT suite, against ``arcology-oracle serve`` with a token."""
    emacs()
    require_packages()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN)
    try:

        async def embedded():
            status, body = await daemon.get_json("/status")
            return status == 200 and body["pending"] == 0 and body["embedded"] > 0 and not body["indexing"]["running"]

        await wait_until(embedded, timeout=60, interval=0.1)
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
            ["--eval", WITH_PACKAGES, "-L", str(ELISP), "-l", "ert", "-l", str(ERT_FILE),
             "-f", "ert-run-tests-batch-and-exit"],
            env=env,
        )  # fmt: skip
    finally:
        daemon.stop()
    assert code == 0, f"ERT failed (exit {code}):\n{output}\n--- daemon log ---\n{daemon.log()}"
    assert "0 unexpected" in output, output

