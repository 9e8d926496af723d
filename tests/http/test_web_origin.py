"""Other web pages in the user's browser cannot use the daemon (headless Chromium).

A page served from another local port tries every way a page has to read ``/search`` or
make the daemon ask the model, on ``/ask`` and on the Ollama and OpenAI routes (which take
JSON under any Content-Type from curl): a CORS fetch, ``no-cors`` fetches with "simple"
content types (no preflight), a JSON fetch (preflighted), a text/plain form whose body is
valid JSON, posted into a frame, and ``sendBeacon``. A DNS-rebinding page (a foreign name resolving to 127.0.0.1, mapped in
Chromium with ``--host-resolver-rules``) loads the daemon's port under its own name. None
of them gets note text, the fake Ollama sees no chat or generate request, and the
daemon's own page, in the same browser, still searches and answers, and must send JSON
as JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from tests.browser import CHROMIUM_ARGS, LAUNCH_MS, WAIT_MS, chromium_path
from tests.runners import start_daemon, wait_indexed, wait_until

REBIND_NAME = "rebind.attacker.test"
NOTE_WORDS = ("Covering indexes", "sqlite-indexing.org")

# Each target gets the same attacks; the bodies are what each API would act on.
TARGETS = ("/ask", "/api/generate", "/api/chat", "/v1/chat/completions")
# Per target: three no-cors fetches, the beacon and the form reach the daemon (the JSON
# fetch stops at its refused preflight).
POSTS_PER_TARGET = 5

ATTACKER_PAGE = """<!doctype html>
<html><body>
<script>
const daemon = "DAEMON";
const question = "what are covering indexes";
const bodies = {
  "/ask": {question, k: 3},
  "/api/generate": {model: "llama3.2", prompt: question, stream: false},
  "/api/chat": {model: "llama3.2+notes", messages: [{role: "user", content: question}], stream: false},
  "/v1/chat/completions": {model: "llama3.2+notes", messages: [{role: "user", content: question}]},
};
async function attempt(name, go) {
  try { const r = await go(); return [name, "status " + r.status + " type " + r.type + " " + (await r.text())]; }
  catch (e) { return [name, "failed: " + e]; }
}
// A text/plain form whose one field makes the body valid JSON: name + "=" + value.
function postForm(path, body) {
  const json = JSON.stringify({...body, pad: ""});
  const frame = document.createElement("iframe");
  frame.name = "sink" + path.replace(/[^a-z]/g, "-");
  document.body.appendChild(frame);
  const form = document.createElement("form");
  Object.assign(form, {method: "POST", enctype: "text/plain", target: frame.name, action: daemon + path});
  const input = document.createElement("input");
  input.name = json.slice(0, -2);
  input.value = json.slice(-2);
  form.appendChild(input);
  document.body.appendChild(form);
  form.submit();
}
window.results = (async () => {
  const out = [];
  out.push(await attempt("cors search", () => fetch(daemon + "/search?q=covering+indexes")));
  out.push(await attempt("no-cors search", () => fetch(daemon + "/search?q=covering+indexes", {mode: "no-cors"})));
  for (const [path, value] of Object.entries(bodies)) {
    const body = JSON.stringify(value);
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      out.push(await attempt("no-cors " + path + " " + type, () => fetch(daemon + path,
        {method: "POST", mode: "no-cors", headers: {"Content-Type": type}, body})));
    }
    out.push(await attempt("json " + path, () => fetch(daemon + path,
      {method: "POST", headers: {"Content-Type": "application/json"}, body})));
    navigator.sendBeacon(daemon + path, new Blob([body], {type: "text/plain"}));
    postForm(path, value);
  }
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
        # The beacons and the forms leave without waiting: wait until the daemon answered
        # every POST.
        def posts(path: str) -> int:
            return sum(1 for m, _, url in seen if m == "POST" and url == daemon.url + path)

        await wait_until(lambda: all(posts(path) >= POSTS_PER_TARGET for path in TARGETS), timeout=20)
        for name, outcome in results.items():
            assert not any(word in outcome for word in NOTE_WORDS), (name, outcome)
            if name.startswith(("no-cors /", "json /")):  # opaque, or refused before the POST
                assert outcome in ("status 0 type opaque ", ) or outcome.startswith("failed"), (name, outcome)
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

        daemon_answers = [(m, s) for m, s, url in seen if "/search" in url or url.removeprefix(daemon.url) in TARGETS]
        assert fake_ollama.state.count("/api/chat") == 0, fake_ollama.state.requests["/api/chat"]
        assert fake_ollama.state.count("/api/generate") == 0, fake_ollama.state.requests["/api/generate"]
        assert len(daemon_answers) >= 4 * POSTS_PER_TARGET and all(status == 403 for _, status in daemon_answers), seen

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
        # Even the daemon's own page must say JSON: a page's request keeps the rule that
        # lets curl post Ollama's examples without the header.
        for path in TARGETS[1:]:
            status = await own.evaluate(
                """path => fetch(path, {method: "POST", headers: {"Content-Type": "text/plain"},
                   body: JSON.stringify({model: "llama3.2", prompt: "hi", messages: []})}).then(r => r.status)""",
                path,
            )  # fmt: skip
            assert status == 415, path
        assert fake_ollama.state.count("/api/chat") == 1 and fake_ollama.state.count("/api/generate") == 0
        await context.close()
    finally:
        daemon.stop()

