"""Access rules over every route the app serves, whatever module added it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading

import aiohttp
import pytest
from arcology_oracle.errors import ConfigError
from arcology_oracle.http import peers
from arcology_oracle.http.app import check_bind, create_app

from tests.api_fuzz import all_routes
from tests.runners import start_daemon

PUBLIC = {("GET", "/health"), ("HEAD", "/health"), ("GET", "/"), ("HEAD", "/")}


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


# --------------------------------------------------------------------------- Host and Origin

ERROR_SHAPES = {
    "/status": lambda body: body["ok"] is False and body["error"],
    "/api/tags": lambda body: isinstance(body["error"], str),
    "/v1/models": lambda body: body["error"]["message"],
}


@pytest.mark.parametrize("token", [None, "right-token"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:7348", "127.0.0.1.evil.example", "localhost.evil",
                                  "0x7f.1", "evil.example:80@127.0.0.1", "", "[::1", "mybox.other.ts.net"])  # fmt: skip
async def test_other_host_names_get_a_403_before_any_handler(make_client, make_settings, fake_ollama, host, token):
    settings = make_settings(ollama_host=fake_ollama.url, token=token, allowed_hosts=["mybox.tail-1.ts.net"])
    client = await make_client(settings)
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    for path, shaped in ERROR_SHAPES.items():
        resp = await client.get(path, headers={"Host": host, **auth})
        assert resp.status == 403, (host, path, resp.status)
        assert shaped(await resp.json())
    resp = await client.post("/ask", json={"question": "sourdough starter"}, headers={"Host": host, **auth})
    assert resp.status == 403
    assert (await client.get("/health", headers={"Host": host})).status == 403
    assert fake_ollama.state.requests.get("/api/chat", []) == []


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST:7348", "localhost.", "127.0.0.1", "127.0.0.2:80", "[::1]", "[::1]:7348",
     "mybox.tail-1.ts.net", "MyBox.Tail-1.ts.net.:443", "100.64.1.2:7348"],
)  # fmt: skip
async def test_loopback_configured_and_allowed_hosts_are_answered(make_client, make_settings, fake_ollama, host):
    # host = the Tailscale address the daemon would bind (the test client binds loopback anyway).
    settings = make_settings(ollama_host=fake_ollama.url, host="100.64.1.2", token="t", allowed_hosts=["mybox.tail-1.ts.net"])
    client = await make_client(settings)
    resp = await client.get("/status", headers={"Host": host, "Authorization": "Bearer t"})
    assert resp.status == 200, (host, await resp.text())


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://127.0.0.1:1", "http://localhost:{port}", "null", "https://127.0.0.1:{port}.evil",
     "http://127.0.0.1:{port}/x", "file://", "http://user@127.0.0.1:{port}", "http://127.0.0.1:notaport"],
)  # fmt: skip
async def test_a_foreign_origin_gets_a_403(client, fake_ollama, origin):
    port = client.port
    origin = origin.format(port=port)
    for path, shaped in ERROR_SHAPES.items():
        resp = await client.get(path, headers={"Origin": origin})
        assert resp.status == 403, (origin, path)
        assert shaped(await resp.json())
    resp = await client.post("/ask", json={"question": "sourdough starter"}, headers={"Origin": origin})
    assert resp.status == 403
    assert fake_ollama.state.requests.get("/api/chat", []) == []


async def test_the_daemons_own_origin_is_answered(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, allowed_hosts=["mybox.tail-1.ts.net"]))
    port = client.port
    cases = [
        ({"Origin": f"http://127.0.0.1:{port}"}, None),
        ({"Origin": f"https://127.0.0.1:{port}"}, None),
        ({"Origin": "https://mybox.tail-1.ts.net"}, "mybox.tail-1.ts.net"),  # tailscale serve
        ({"Origin": "https://mybox.tail-1.ts.net:8443"}, "mybox.tail-1.ts.net:8443"),
        ({"Origin": "http://localhost"}, "localhost:80"),
    ]
    for headers, host in cases:
        if host:
            headers = {**headers, "Host": host}
        resp = await client.get("/status", headers=headers)
        assert resp.status == 200, (headers, await resp.text())
    resp = await client.get("/status", headers={"Origin": "https://mybox.tail-1.ts.net:8443", "Host": "mybox.tail-1.ts.net"})
    assert resp.status == 403


# --------------------------------------------------------------------------- Content-Type

JSON_POSTS = {
    "/ask": ({"question": "x"}, lambda body: body["ok"] is False and body["status"] == 415),
    "/similar": ({"text": "x"}, lambda body: body["ok"] is False),
    "/api/chat": ({"model": "m", "messages": []}, lambda body: isinstance(body["error"], str)),
    "/api/embed": ({"model": "m", "input": "x"}, lambda body: isinstance(body["error"], str)),
    "/v1/chat/completions": ({"model": "m", "messages": []}, lambda body: body["error"]["message"]),
}


SIMPLE_TYPES = [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                "application/jsonx"]  # fmt: skip
# What browsers add to a request a page makes (Origin on every POST, Sec-Fetch-* to loopback).
BROWSER_SHAPED = {
    "none": {},
    "own origin": {"Origin": "http://127.0.0.1:{port}"},
    "same-origin fetch": {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "empty"},
    "fetch mode only": {"Sec-Fetch-Mode": "no-cors"},
}


@pytest.mark.parametrize("shape", list(BROWSER_SHAPED))
@pytest.mark.parametrize("content_type", SIMPLE_TYPES)
async def test_json_posts_need_a_json_content_type(client, fake_ollama, content_type, shape):
    """Native routes always; /api/* and /v1/* whenever the request could come from a page."""
    browser = {k: v.format(port=client.port) for k, v in BROWSER_SHAPED[shape].items()}
    for path, (body, shaped) in JSON_POSTS.items():
        if path.startswith(("/api/", "/v1/")) and not browser:
            continue  # test_compat_routes_take_json_under_any_content_type_from_non_browsers
        headers = {**browser, **({"Content-Type": content_type} if content_type else {})}
        resp = await client.post(path, data=json.dumps(body).encode(), headers=headers)
        if content_type is None:  # aiohttp's client sends application/octet-stream for bytes
            assert resp.request_info.headers.get("Content-Type") in (None, "application/octet-stream")
        assert resp.status == 415, (path, content_type, resp.status)
        assert shaped(await resp.json())
    assert fake_ollama.state.requests.get("/api/chat", []) == []


COMPAT_POSTS = {
    "/api/chat": {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}], "stream": False},
    "/api/generate": {"model": "llama3.2", "prompt": "Why is the sky blue?", "stream": False},
    "/api/embed": {"model": "nomic-embed-text", "input": "sourdough"},
    "/v1/chat/completions": {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]},
}


@pytest.mark.parametrize("content_type", SIMPLE_TYPES)
async def test_compat_routes_take_json_under_any_content_type_from_non_browsers(client, fake_ollama, content_type):
    """As Ollama does: ``curl URL/api/generate -d '{...}'`` says it sends a form."""
    headers = {"Content-Type": content_type} if content_type else {}
    for path, body in COMPAT_POSTS.items():
        resp = await client.post(path, data=json.dumps(body).encode(), headers=headers)
        assert resp.status == 200, (path, content_type, await resp.text())
    assert fake_ollama.state.count("/api/chat") == 2 and fake_ollama.state.count("/api/generate") == 1
    resp = await client.post("/api/chat", data=b"model=llama3.2", headers=headers)
    assert resp.status == 400 and "JSON" in (await resp.json())["error"]


# Ollama's README, as written (only the port differs): curl -d says
# application/x-www-form-urlencoded.
OLLAMA_DOC_CURLS = {
    "/api/generate": """curl http://localhost:11434/api/generate -d '{
  "model": "llama3.2",
  "prompt":"Why is the sky blue?"
}'""",
    "/api/chat": """curl http://localhost:11434/api/chat -d '{
  "model": "llama3.2",
  "messages": [
    { "role": "user", "content": "why is the sky blue?" }
  ]
}'""",
}


async def test_ollamas_documented_curl_commands_work_against_the_real_daemon(tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    port = daemon.url.rsplit(":", 1)[1]
    try:
        for path, command in OLLAMA_DOC_CURLS.items():
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", command.replace("11434", port), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err
            lines = [json.loads(line) for line in out.decode().splitlines()]
            assert "error" not in lines[0] and lines[-1]["done"] is True, (path, out[:300])
            assert fake_ollama.state.count(path) == 1
        asked = fake_ollama.state.requests["/api/generate"][0]
        assert asked["model"] == "llama3.2" and asked["prompt"] == "Why is the sky blue?"
    finally:
        daemon.stop()


async def test_json_content_type_with_parameters_is_accepted(client):
    resp = await client.post(
        "/similar", data=b'{"text": "tomato blight"}', headers={"Content-Type": "Application/JSON; charset=utf-8"}
    )
    assert resp.status == 200, await resp.text()


async def test_real_daemon_takes_allow_host_from_flag_and_environment(tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, extra_args=["--allow-host", "mybox.tail-1.ts.net"],
        env={"ARCOLOGY_ORACLE_ALLOWED_HOSTS": "ignored.example"}, token="t0ken",  # the flag wins, as for every setting
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer t0ken"}) as session:
            for host, status in (("mybox.tail-1.ts.net", 200), ("evil.example:7348", 403), ("ignored.example", 403)):
                for _ in range(2):
                    async with session.get(daemon.url + "/status", headers={"Host": host}) as resp:
                        assert resp.status == status, host
        refused = [line for line in daemon.log().splitlines() if "refused a request for host" in line]
        assert len(refused) == 2 and "Traceback" not in daemon.log()  # once per name
    finally:
        daemon.stop()


def test_a_name_a_proxy_passes_on_needs_a_token_and_no_token_is_said(make_settings, caplog, monkeypatch):
    # --allow-host without a token: every device that reaches the proxy (tailscale serve)
    # could read and write the notes; the daemon refuses to start.
    with pytest.raises(ConfigError, match="without a token"):
        check_bind(make_settings(allowed_hosts=["mybox.tail-1.ts.net"]))
    check_bind(make_settings(allowed_hosts=["mybox.tail-1.ts.net"], token="t0ken"))
    with caplog.at_level(logging.INFO):
        check_bind(make_settings())  # loopback without a token: allowed, and who is answered said
    assert f"only programs of this account (uid {os.geteuid()})" in caplog.text
    caplog.clear()
    monkeypatch.setattr(peers, "can_tell", lambda: False)  # as on macOS
    with caplog.at_level(logging.WARNING):
        check_bind(make_settings())
    assert "every account on this machine" in caplog.text


async def test_another_page_may_link_to_the_daemons_page_but_to_no_route(client, fake_ollama):
    navigate = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    assert (await client.get("/", headers=navigate)).status == 200
    resp = await client.get("/ask", params={"q": "what are covering indexes", "model": "llama3.2"}, headers=navigate)
    assert resp.status == 403
    assert fake_ollama.state.requests.get("/api/chat", []) == []


@pytest.mark.parametrize(
    "headers,status",
    [
        ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, 403),
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}, 403),
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, 403),
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 403),
        ({"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, 200),
        ({"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 200),
    ],
)
async def test_fetch_metadata_refuses_other_sites_subresources(client, headers, status):
    resp = await client.get("/search", params={"q": "covering index"}, headers=headers)
    assert resp.status == status, headers



async def test_the_proc_table_is_read_off_the_event_loop(make_client, make_settings, fake_ollama, monkeypatch):
    """Where a sandbox refuses netlink, a new connection's account is read from
    ``/proc/net/tcp`` (milliseconds with a few thousand sockets listed): in a worker
    thread, not on the event loop every other request waits on. Netlink's lookup (~10 µs)
    stays in place."""
    read_in: list[threading.Thread] = []
    by_table = peers._by_table

    def recording(*args):
        read_in.append(threading.current_thread())
        return by_table(*args)

    monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    monkeypatch.setattr(peers, "_by_table", recording)
    monkeypatch.setattr(peers, "_way", "unasked", raising=False)
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    response = await client.get("/health")
    assert response.status == 200  # the owner's own connection, told by the table
    probe, *lookups = read_in  # the probe (once, on the loop), then the connection's lookup
    assert lookups and all(thread is not threading.current_thread() for thread in lookups)
