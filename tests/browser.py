"""Headless Chromium for the browser tests: Debian's binary, the flags this closed network
needs, and waits generous enough for a loaded 2-core machine.

The fixtures: one Chromium a test module (``chromium``: a launch took ~2.5 s on the loaded
2-core machine, once per test before), lent to each test as ``browser``, which closes
every context (page, storage, cookies) the test opened once it ends, so no test sees
another's. Chromium's connection lives on the event loop that launched it, so a module
using them runs its tests, and this ``fake_ollama``, on the module's loop:
``pytestmark = BROWSER_LOOP`` and ``from tests.browser import browser, chromium, fake_ollama``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.fakes.fake_ollama import FakeOllama, running_fake_ollama

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




# The tests of a module that uses the shared Chromium run on the module's event loop.
BROWSER_LOOP = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium() -> AsyncIterator:
    """Headless Chromium (Debian's, driven by playwright's bundled driver), for one module."""
    executable = chromium_path()
    try:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.fail(
            "the Python package `playwright` is missing: `pip install playwright==1.63.0` "
            "(its bundled driver drives Debian's chromium; no `playwright install` needed); the README's test command installs it",
            pytrace=False,
        )
    async with async_playwright() as pw:
        try:
            launched = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=LAUNCH_MS)
        except PlaywrightError as exc:
            pytest.fail(f"could not start headless Chromium at {executable}: {exc}", pytrace=False)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def browser(chromium) -> AsyncIterator:
    """The module's Chromium for one test; the contexts the test opened are closed after it."""
    assert chromium.is_connected(), "Chromium went away during an earlier test of this module"
    assert not chromium.contexts, "an earlier test's browser contexts are still open"
    try:
        yield chromium
    finally:
        for context in list(chromium.contexts):
            await context.close()


@pytest_asyncio.fixture(loop_scope="module")
async def fake_ollama() -> AsyncIterator[FakeOllama]:
    """The suite's fake Ollama (tests/conftest.py), on the module's loop."""
    async with running_fake_ollama() as fake:
        yield fake
