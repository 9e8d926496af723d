"""What a start of the index does before the daemon listens, so that the first requests
after it do not (index/service.py OracleIndex.start)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.runners import REPO


def test_the_start_imports_what_httpx_imports_at_its_first_request(tmp_path):
    # anyio's asyncio backend, which httpx (the official ollama client: chat, the model
    # check) imported at the process's first request, on the event loop: 18-22 ms that
    # every request the loop served then waited for. In a fresh interpreter: this one has
    # imported it long ago.
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "a.org").write_text("* A\nText.\n")
    script = textwrap.dedent(f"""
        import asyncio, sys
        from arcology_oracle.config import load_settings
        from arcology_oracle.index.service import OracleIndex

        async def main():
            settings = load_settings(overrides={{"roam_dir": {str(roam)!r}, "db_path": {str(tmp_path / "i.db")!r},
                                                 "ollama_host": "http://127.0.0.1:9"}}, environ={{}})
            index = OracleIndex(settings)
            before = "anyio._backends._asyncio" in sys.modules
            await index.start()
            try:
                print(before, "anyio._backends._asyncio" in sys.modules)
            finally:
                await index.close()

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO / "daemon", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"], (done.stdout, done.stderr)
