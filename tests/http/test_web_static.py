"""The web page's files over HTTP (no browser): served, cached and locked down by CSP.

The browser end-to-end test is tests/http/test_web_page.py.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from arcology_oracle.http.web import CONTENT_SECURITY_POLICY, load_assets


def csp_directives(header: str) -> dict[str, list[str]]:
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


class PageScan(HTMLParser):
    """Collects what matters for the CSP: scripts, styles, handler attributes, external URLs."""

    def __init__(self):
        super().__init__()
        self.script_srcs: list[str | None] = []
        self.inline_script = False
        self.inline_styles: list[str] = []
        self.handler_attrs: list[str] = []
        self.urls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.script_srcs.append(attrs.get("src"))
            self._in_script = True
        if tag == "style" or "style" in attrs:
            self.inline_styles.append(tag)
        self.handler_attrs += [name for name in attrs if name.startswith("on")]
        self.urls += [attrs[a] for a in ("src", "href", "action") if attrs.get(a)]

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.inline_script = True


@pytest.fixture
async def web_client(make_client, settings):
    return await make_client(settings, embedded=False)


async def test_page_is_served_with_a_strict_csp(web_client):
    resp = await web_client.get("/")
    assert resp.status == 200
    assert resp.content_type == "text/html"
    assert resp.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    csp = csp_directives(resp.headers["Content-Security-Policy"])
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'self'"]
    assert csp["style-src"] == ["'self'"]
    assert csp["connect-src"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert not any("unsafe" in v or v.startswith(("http", "data:", "*")) for vs in csp.values() for v in vs)
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "no-referrer"
    assert resp.headers["Cache-Control"] == "no-cache"

    scan = PageScan()
    scan.feed(await resp.text())
    assert scan.script_srcs and all(src and src.startswith("/static/") for src in scan.script_srcs)
    assert not scan.inline_script
    assert not scan.inline_styles
    assert not scan.handler_attrs
    # Everything the page loads comes from the daemon itself.
    assert scan.urls and all(url.startswith("/static/") for url in scan.urls)


async def test_every_asset_the_page_names_is_served_versioned_with_the_csp(web_client):
    html = await (await web_client.get("/")).text()
    refs = re.findall(r'"(/static/[\w.-]+\?v=[0-9a-f]{16})"', html)
    names = {ref.split("?")[0].rsplit("/", 1)[1] for ref in refs}
    assert {"app.js", "style.css"} <= names
    types = {"app.js": "text/javascript", "style.css": "text/css", "icon.svg": "image/svg+xml"}
    for ref in refs:
        resp = await web_client.get(ref)
        name = ref.split("?")[0].rsplit("/", 1)[1]
        assert resp.status == 200, ref
        assert resp.content_type == types[name]
        assert resp.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert "immutable" in resp.headers["Cache-Control"]
        assert await resp.read()


async def test_unversioned_asset_is_revalidated_and_etag_answers_304(web_client):
    resp = await web_client.get("/static/app.js")
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-cache"
    etag = resp.headers["ETag"]
    again = await web_client.get("/static/app.js", headers={"If-None-Match": etag})
    assert again.status == 304
    assert again.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    page = await web_client.get("/")
    assert (await web_client.get("/", headers={"If-None-Match": page.headers["ETag"]})).status == 304
    head = await web_client.head("/")
    assert head.status == 200


@pytest.mark.parametrize("path", ["/static/nope.js", "/static/../config.py", "/static/%2e%2e/http/web.py", "/static/"])
async def test_unknown_or_escaping_asset_paths_are_404(web_client, path):
    resp = await web_client.get(path)
    assert resp.status == 404


async def test_page_and_assets_need_no_token_but_the_api_does(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, token="s3cret"), embedded=False)
    assert (await client.get("/")).status == 200
    assert (await client.get("/static/app.js")).status == 200
    assert (await client.get("/status")).status == 401
    assert (await client.get("/heading", params={"file": "sourdough-baking.org", "line": "1"})).status == 401
    ok = await client.get("/status", headers={"Authorization": "Bearer s3cret"})
    assert ok.status == 200
    # The page and its assets set no cookie: it works with cookies off.
    assert "Set-Cookie" not in (await client.get("/")).headers


def test_script_never_writes_html_and_keeps_the_token_out_of_urls():
    """A cheap guard beside the browser test: note text only ever goes in as text."""
    assets = load_assets()
    js = assets.static["app.js"].body.decode()
    assert not re.search(r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write", js)
    assert "localStorage" in js
    assert "Authorization" in js
    assert not re.search(r"[?&]token=", js)
