"""Access rules over every route the app serves, whatever module added it."""

from __future__ import annotations

import re

from arcology_oracle.http.app import create_app

PUBLIC = {("GET", "/health"), ("HEAD", "/health"), ("GET", "/"), ("HEAD", "/")}


def all_routes(app):
    """(method, concrete path) for every registered route, placeholders filled in."""
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        if path is None:
            continue
        path = re.sub(r"\{[^}]+\}", "x", path)
        if "prefix" in info and "formatter" not in info and "path" not in info:
            path = path.rstrip("/") + "/app.js"
        yield route.method, path


async def test_every_route_but_health_and_page_needs_the_token(aiohttp_client, make_settings, fake_ollama):
    app = create_app(make_settings(ollama_host=fake_ollama.url, token="right-token"), watch=False)
    client = await aiohttp_client(app)
    routes = sorted(set(all_routes(app)))
    assert len(routes) >= 8
    checked = 0
    for method, path in routes:
        if method == "*" or (method, path) in PUBLIC or path.startswith("/static/"):
            continue
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": "right-token"}):
            resp = await client.request(method, path, headers=headers, json={})
            assert resp.status == 401, (method, path, headers, resp.status)
            body = await resp.text()
            assert "right-token" not in body
        checked += 1
    assert checked >= 6


async def test_default_bind_is_loopback(make_settings):
    settings = make_settings()
    assert settings.host == "127.0.0.1" and settings.is_loopback
