"""Raw HTTP responses of the real daemon, recorded for the Emacs client's offline tests.

``elisp/test/responses/NAME.http`` holds the bytes the daemon sent for one request, as
they came off the socket (status line, headers, framing and body). The ERT file
``elisp/test/arcology-oracle-http-test.el`` serves them from a local server to the
package's HTTP client, so its real parsing runs on real bytes without a daemon.

``python -m tests.elisp_recordings`` records them again (real daemon, fake Ollama, a copy
of the example vault); ``tests/elisp/test_elisp.py`` checks that the daemon still answers
each request in the recorded shape (status, framing, content type, JSON keys, events).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from tests.org_samples import IDS, VAULT

RESPONSES = Path(__file__).resolve().parent.parent / "elisp" / "test" / "responses"
TOKEN = "recording-token"

# NAME: (method, target, JSON body or None, Accept, send the token?)
REQUESTS: dict[str, tuple[str, str, dict | None, str, bool]] = {
    "status": ("GET", "/status", None, "application/json", True),
    "similar": ("GET", f"/similar?node={IDS['sourdough']}&k=3", None, "application/json", True),
    "ask-stream": (
        "POST", "/ask", {"question": "How do I feed the starter?", "stream": True},
        "application/x-ndjson", True,
    ),
    "unauthorized": ("GET", "/status", None, "application/json", False),
    "unknown-node": ("GET", "/nodes/no-such-id", None, "application/json", True),
}  # fmt: skip


def request_bytes(url: str, name: str, token: str) -> bytes:
    """The request NAME as arcology-oracle-http-client.el writes it (HTTP/1.1, Connection: close)."""
    method, target, body, accept, with_token = REQUESTS[name]
    payload = json.dumps(body).encode() if body is not None else b""
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: {urlsplit(url).netloc}\r\n"
        f"User-Agent: arcology-oracle.el\r\nAccept: {accept}\r\nConnection: close\r\n"
        + (f"Authorization: Bearer {token}\r\n" if with_token else "")
        + (f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n" if payload else "")
        + "\r\n"
    )
    return head.encode() + payload


async def fetch_raw(url: str, name: str, token: str) -> bytes:
    """Send request NAME to the daemon at URL; return every byte it sends until it closes."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(request_bytes(url, name, token))
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 60)
    finally:
        writer.close()


def shape(raw: bytes) -> dict:
    """What must stay true of a response for the recordings to stand for the daemon:
    status, content type, framing, and the JSON keys (or NDJSON event types) of its body."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    chunked = "chunked" in headers.get("transfer-encoding", "")
    if chunked:
        data, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            data, rest = data + rest[:size], rest[size + 2 :]
        body = data
    content_type = headers.get("content-type", "").split(";")[0]
    if content_type == "application/x-ndjson":
        events = [json.loads(line)["type"] for line in body.splitlines() if line.strip()]
        # Token events vary in number with the reply; keep their presence only.
        content = [t for i, t in enumerate(events) if t != "token" or events[i - 1] != "token"]
    else:
        content = sorted(json.loads(body))
    return {
        "status": lines[0].split(" ")[1],
        "content-type": content_type,
        "chunked": chunked,
        "content-length": "content-length" in headers,
        "content": content,
    }


async def record_all(url: str, token: str) -> dict[str, bytes]:
    """Every request of :data:`REQUESTS`, sent to the daemon at URL."""
    return {name: await fetch_raw(url, name, token) for name in REQUESTS}


async def _main() -> None:
    from tests.fakes.fake_ollama import running_fake_ollama
    from tests.runners import start_daemon

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        roam = tmp_path / "roam"
        shutil.copytree(VAULT, roam, symlinks=True)
        async with running_fake_ollama() as fake:
            daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake.url, token=TOKEN, embedded=True)
            try:
                recorded = await record_all(daemon.url, TOKEN)
            finally:
                daemon.stop()
    RESPONSES.mkdir(parents=True, exist_ok=True)
    for name, raw in recorded.items():
        (RESPONSES / f"{name}.http").write_bytes(raw)
        print(f"{name}.http: {len(raw)} bytes, {shape(raw)}")


if __name__ == "__main__":
    asyncio.run(_main())
