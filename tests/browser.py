"""Headless Chromium for the browser tests: Debian's binary, the flags this closed network
needs, and waits generous enough for a loaded 2-core machine."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Generous for a loaded 2-core machine; every wait ends as soon as its condition holds.
WAIT_MS = 20_000
# A cold first start of Chromium on a loaded 2-core machine took over 20 s in CI.
LAUNCH_MS = 120_000


def chromium_path() -> str:
    path = os.environ.get("ARCOLOGY_ORACLE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail(
            "headless Chromium is missing: install Debian's package (`apt-get install -y chromium`) "
            "or set ARCOLOGY_ORACLE_CHROMIUM to a Chromium binary; scripts/setup-test-deps installs it",
            pytrace=False,
        )
    return path


