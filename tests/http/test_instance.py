"""Which daemon answers (http/instance.py): every response names its process, and a
request made with another daemon's notes directory is refused before any route runs."""

from __future__ import annotations

from urllib.parse import quote

INSTANCE = "X-Arcology-Oracle-Instance"
NOTES = "X-Arcology-Oracle-Notes"


async def test_a_request_made_for_other_notes_is_refused(client, settings):
    status = await (await client.get("/status")).json()
    instance = status["instance"]
    assert status["exclude_globs"] == list(settings.exclude_globs)
    resp = await client.get("/search", params={"q": "starter"})
    assert resp.headers[INSTANCE] == instance

    same = await client.get("/search", params={"q": "starter"}, headers={NOTES: quote(status["roam_dir"])})
    assert same.status == 200
    other = await client.post(
        "/memorize", json={"text": "never written"}, headers={NOTES: quote("/home/me/other-notes/日記")}
    )
    body = await other.json()
    assert other.status == 409 and body["error"].startswith("the daemon was restarted"), body
    assert str(settings.roam_dir) in body["error"] and other.headers[INSTANCE] == instance
    notes = [p.read_bytes().decode("utf-8", "replace") for p in settings.roam_dir.rglob("*.org")]
    assert not any("never written" in text for text in notes)
    for path in ("/status", "/health"):  # they take nothing a client was told
        assert (await client.get(path, headers={NOTES: "elsewhere"})).status == 200
