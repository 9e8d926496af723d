"""Other web pages in the user's browser cannot use the daemon (headless Chromium).

A page served from another local port tries every way a page has to read ``/search`` or
make the daemon ask the model: a CORS fetch, ``no-cors`` fetches with "simple" content
types (no preflight), a JSON fetch (preflighted), a form posted into a frame and
``sendBeacon``. A DNS-rebinding page (a foreign name resolving to 127.0.0.1, mapped in
Chromium with ``--host-resolver-rules``) loads the daemon's port under its own name. None
of them gets note text, the fake Ollama sees no chat request, and the daemon's own page,
in the same browser, still searches and answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from tests.browser import CHROMIUM_ARGS, LAUNCH_MS, WAIT_MS, chromium_path
from tests.runners import start_daemon, wait_indexed, wait_until

REBIND_NAME = "rebind.attacker.test"
NOTE_WORDS = ("Covering indexes", "sqlite-indexing.org")

ATTACKER_PAGE = """<!doctype html>
<html><body>
<iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="DAEMON/ask">
  <input name='{"question": "what are covering indexes", "pad": "' value='"}'>
</form>
<script>
const daemon = "DAEMON";
const body = JSON.stringify({question: "what are covering indexes", k: 3});
async function attempt(name, go) {
  try { const r = await go(); return [name, "status " + r.status + " type " + r.type + " " + (await r.text())]; }
  catch (e) { return [name, "failed: " + e]; }
}
window.results = (async () => {
  const out = [];
  out.push(await attempt("cors search", () => fetch(daemon + "/search?q=covering+indexes")));
  out.push(await attempt("no-cors search", () => fetch(daemon + "/search?q=covering+indexes", {mode: "no-cors"})));
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
    out.push(await attempt("no-cors ask " + type, () => fetch(daemon + "/ask",
      {method: "POST", mode: "no-cors", headers: {"Content-Type": type}, body})));
  }
  out.push(await attempt("json ask", () => fetch(daemon + "/ask",
    {method: "POST", headers: {"Content-Type": "application/json"}, body})));
  navigator.sendBeacon(daemon + "/ask", new Blob([body], {type: "text/plain"}));
  document.getElementById("form").submit();
  return out;
})();
</script>
</body></html>
"""


@pytest.fixture
async def rebinding_browser() -> AsyncIterator:
    """Chromium in which ``rebind.attacker.test`` resolves to 127.0.0.1, as after a DNS rebinding."""
    from playwright.async_api import async_playwright

    executable = chromium_path()
    async with async_playwright() as pw:
        args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REBIND_NAME} 127.0.0.1"]
        browser = await pw.chromium.launch(executable_path=executable, args=args, timeout=LAUNCH_MS)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def attacker_site(aiohttp_server):
    """An HTTP server on another loopback port, serving :data:`ATTACKER_PAGE` for a daemon URL."""
    page = {"html": ""}

    async def index(request: web.Request) -> web.Response:
        return web.Response(text=page["html"], content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    server = await aiohttp_server(app)
    server.page = page
    return server


async def test_pages_on_other_origins_cannot_read_or_ask(rebinding_browser, attacker_site, tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        context = await rebinding_browser.new_context()
        context.set_default_timeout(WAIT_MS)
        seen: list[tuple[str, int, str]] = []

        async def record(response):
            if response.url.startswith(daemon.url) or REBIND_NAME in response.url:
                seen.append((response.request.method, response.status, response.url))

        context.on("response", record)

        # 1. A page on another local port.
        attacker_site.page["html"] = ATTACKER_PAGE.replace("DAEMON", daemon.url)
        page = await context.new_page()
        await page.goto(str(attacker_site.make_url("/")))
        results = dict(await page.evaluate("window.results"))
        # The beacon and the form leave without waiting: wait until the daemon answered
        # all five POSTs (three no-cors fetches, the beacon, the form; the JSON fetch
        # stops at its refused preflight).
        await wait_until(lambda: sum(1 for m, _, url in seen if m == "POST" and url.endswith("/ask")) >= 5, timeout=20)
        for name, outcome in results.items():
            assert not any(word in outcome for word in NOTE_WORDS), (name, outcome)
        assert results["cors search"].startswith("failed"), results
        assert "type opaque" in results["no-cors search"], results

        # 2. A DNS-rebinding page: the daemon's own port under a foreign name.
        port = daemon.url.rsplit(":", 1)[1]
        rebound = await context.new_page()
        response = await rebound.goto(f"http://{REBIND_NAME}:{port}/search?q=covering+indexes")
        text = await rebound.content()
        assert response.status == 403 and not any(word in text for word in NOTE_WORDS), text
        page_response = await rebound.goto(f"http://{REBIND_NAME}:{port}/")
        assert page_response.status == 403
        await rebound.close()

        daemon_answers = [(m, s) for m, s, url in seen if "/search" in url or url.endswith("/ask")]
        assert daemon_answers and all(status in (403, 415) for _, status in daemon_answers), seen
        assert fake_ollama.state.count("/api/chat") == 0, fake_ollama.state.requests["/api/chat"]

        # 3. The daemon's own page, in the same browser, still searches and answers.
        own = await context.new_page()
        await own.goto(daemon.url + "/")
        await own.fill("#search-input", "covering index")
        await own.locator("#search-results > li", has_text="Covering indexes").first.wait_for()
        await own.fill("#question", "What is a covering index?")
        await own.click("#ask-button")
        await own.locator("#answer[data-state=done]").wait_for()
        assert fake_ollama.state.count("/api/chat") == 1
        asks = [(m, s) for m, s, url in seen if url == daemon.url + "/ask"]
        assert asks[-1] == ("POST", 200), seen
        await context.close()
    finally:
        daemon.stop()

