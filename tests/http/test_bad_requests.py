"""Hostile request input gets a 4xx in the called API's error shape, never a 500 or a
traceback in the log: numbers that overflow, JSON nested beyond reason, a non-ASCII
Authorization header, and what aiohttp's HTTP parser refuses before any handler runs
(the latter against the real daemon over raw sockets)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from tests.org_samples import IDS

HUGE_NUMBERS = ("Infinity", "-Infinity", "1e400", "1e999", "NaN")


def json_with(field: str, literal: str, **fields) -> bytes:
    """A JSON object text with ``field`` set to the raw ``literal`` (e.g. ``1e400``)."""
    body = json.dumps(fields)[:-1]
    sep = ", " if fields else ""
    return f'{body}{sep}"{field}": {literal}}}'.encode()


POST_ROUTES = {
    "/similar": {"text": "sourdough starter"},
    "/ask": {"question": "How do I feed a starter?"},
    "/summarize": {"node": IDS["sourdough"]},
    "/converse": {"org": "* How often should I feed my starter?\n"},
}


def assert_native_error(resp_status: int, body: dict, status: int = 400) -> None:
    assert resp_status == status, body
    assert body["ok"] is False and body["status"] == status and body["error"]


@pytest.mark.parametrize("path,field", [*((path, "k") for path in sorted(POST_ROUTES)), ("/ask", "line")])
@pytest.mark.parametrize("literal", HUGE_NUMBERS)
async def test_overflowing_numbers_are_a_400(client, caplog, path, field, literal):
    caplog.set_level(logging.INFO)
    resp = await client.post(
        path, data=json_with(field, literal, **POST_ROUTES[path]), headers={"Content-Type": "application/json"}
    )
    assert_native_error(resp.status, await resp.json())
    assert field in (await resp.json())["error"] or "JSON" in (await resp.json())["error"]
    assert "Traceback" not in caplog.text and "OverflowError" not in caplog.text


@pytest.mark.parametrize("params", [{"k": "Infinity"}, {"k": "1e400"}, {"k": "-Infinity"}, {"line": "1e999"}])
async def test_overflowing_numbers_in_a_query_are_a_400(client, params):
    query = {"file": "bread-hydration.org", "line": "1", **params}
    resp = await client.get("/similar", params=query)
    assert_native_error(resp.status, await resp.json())
    if "k" in params:
        resp = await client.get("/ask", params={"q": "starter", **params})
        assert_native_error(resp.status, await resp.json())


@pytest.mark.parametrize(
    "path,shape",
    [
        ("/ask", "native"),
        ("/similar", "native"),
        ("/converse", "native"),
        ("/api/chat", "ollama"),
        ("/api/embed", "ollama"),
        ("/v1/chat/completions", "openai"),
        ("/v1/embeddings", "openai"),
    ],
)
@pytest.mark.parametrize("depth", [100_000, 5_000])
async def test_deeply_nested_json_is_a_400(client, caplog, path, shape, depth):
    caplog.set_level(logging.INFO)
    for body in (b"[" * depth, b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"):
        resp = await client.post(path, data=body, headers={"Content-Type": "application/json"})
        assert resp.status == 400, (path, resp.status, await resp.text())
        answer = await resp.json()
        message = {"native": lambda b: b["error"], "ollama": lambda b: b["error"],
                   "openai": lambda b: b["error"]["message"]}[shape](answer)  # fmt: skip
        assert "deep" in message or "nested" in message, message
    assert "RecursionError" not in caplog.text and "Traceback" not in caplog.text


async def test_non_ascii_authorization_is_a_401_with_one_log_line(make_client, make_settings, fake_ollama, caplog):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, token="tok"))
    url = str(client.make_url("")).rstrip("/")
    caplog.set_level(logging.DEBUG, logger="arcology_oracle")
    caplog.set_level(logging.DEBUG, logger="aiohttp.server")
    caplog.clear()
    shapes = {"/status": lambda b: b["ok"] is False, "/api/tags": lambda b: "error" in b,
              "/v1/models": lambda b: "message" in b["error"]}  # fmt: skip
    for path, shaped in shapes.items():
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".encode()
        status, _, body = await raw_exchange(url, request + b"Authorization: Bearer \xa0abc\r\n\r\n")
        assert status == 401 and shaped(json.loads(body)), (path, status, body)
    records = [r for r in caplog.records if r.levelno >= logging.INFO and r.name != "aiohttp.access"]
    assert len(records) == 3, [r.getMessage() for r in records]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in records)
    assert "Traceback" not in caplog.text


# --------------------------------------------------------------------------- the HTTP parser


async def raw_exchange(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is on a new connection; (status, headers, body) of the answer."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


PARSER_CASES = {
    "url over 8190 bytes": b"GET /search?q=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "raw non-ASCII bytes in the query": b"GET /search?q=\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "Content-Length and Transfer-Encoding": (
        b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    "a header over 8190 bytes": b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
}


async def test_parser_errors_are_json_and_log_one_line_each(daemon):
    before = daemon.log()
    for name, request in PARSER_CASES.items():
        status, headers, body = await raw_exchange(daemon.url, request)
        assert status == 400, (name, status, body[:200])
        assert headers["content-type"].startswith("application/json"), (name, headers)
        answer = json.loads(body)
        assert answer["ok"] is False and answer["status"] == 400 and answer["error"], name
        assert len(answer["error"]) < 300 and "aaaa" not in answer["error"], answer
    # The daemon still answers on a new connection.
    assert (await daemon.get_json("/health"))[0] == 200
    logged = daemon.log()[len(before):]
    assert "Traceback" not in logged and "Error handling request" not in logged, logged
    lines = [line for line in logged.splitlines() if "bad HTTP request" in line]
    assert len(lines) == len(PARSER_CASES), logged
    assert all(len(line) < 400 for line in lines)


@pytest.mark.parametrize(
    "path,body,field,limit",
    [
        ("/memorize", {"text": "x" * 200_001}, "text", 200_000),
        ("/recall", {"question": "x" * 10_001}, "question", 10_000),
    ],
)
async def test_a_text_too_long_says_so_in_characters(client, path, body, field, limit):
    """C-c o M on a whole 1.5 MB note said 'text: Value should have at most 200000 items
    after validation, not 1505621': the limit of a text is in characters."""
    resp = await client.post(path, json=body)
    data = await resp.json()
    assert_native_error(resp.status, data)
    length = len(body[field])
    assert data["error"] == f"{field}: is too long: {length} characters, at most {limit}", data
    assert "x" * 20 not in data["error"]  # the text itself is never echoed
