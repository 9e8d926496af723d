"""A note whose ``#+SETUPFILE:`` is a URL (Org fetches it; the daemon does not) is kept
out as private: what that file holds may make it so. The real reader, and the real
daemon (the note is not found, the log says why once without naming it, and a local copy
named instead brings it in). A local setup file that cannot be read gives no tags, as
Org reads it: that note stays indexed."""

from __future__ import annotations

from arcology_oracle.notes.reader import read_org_bytes
import aiohttp

from tests.runners import start_daemon, wait_until

URL_LINE = "#+SETUPFILE: https://example.org/theme.setup\n"
BODY = "#+title: Themed\n* Otter notes\nurlsetupotter swims in the bay\n"


def test_a_url_setup_file_makes_the_note_private_and_a_missing_local_one_does_not(tmp_path):
    (tmp_path / "via.setup").write_text(URL_LINE + "#+filetags: :theme:\n")
    read = lambda text: read_org_bytes(text.encode(), "note.org", root=tmp_path)  # noqa: E731
    assert read(URL_LINE + BODY).private
    assert read("#+SETUPFILE: via.setup\n" + BODY).private  # a URL named by a local setup file
    assert read(f'#+SETUPFILE: "{URL_LINE.split()[1]}"\n' + BODY).private  # quoted
    assert not read("#+SETUPFILE: missing.setup\n" + BODY).private  # fails open, as Org (it warns only)
    assert not read(BODY).private
    # A URL in a src block is no keyword.
    assert not read("#+begin_src org\n" + URL_LINE + "#+end_src\n" + BODY).private


async def test_the_daemon_keeps_out_a_note_with_a_url_setup_file_until_a_local_copy_is_named(
    tmp_path, roam_dir, fake_ollama
):
    note = roam_dir / "themed-otters.org"
    note.write_text(URL_LINE + BODY)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        status, body = await daemon.get_json("/search", q="urlsetupotter")
        assert status == 200 and not [r for r in body["results"] if r["file"] == note.name], body
        log = daemon.log()
        assert "names a #+SETUPFILE by URL, which is not fetched: it is kept out as private" in log, log
        assert "themed-otters" not in log, log
        # Said once, not at each read: a question asked from the note reads it again,
        # at each change of it.
        for n in range(3):
            with note.open("a") as f:
                f.write(f"edit {n}\n")
            async with aiohttp.ClientSession() as session:
                ask = {"question": "where?", "file": note.name, "line": 3, "stream": False}
                async with session.post(daemon.url + "/ask", json=ask) as resp:
                    assert resp.status == 200, await resp.text()
        said = daemon.log().count("names a #+SETUPFILE by URL")
        assert said == 1, f"said {said} times"

        (roam_dir / "theme.setup").write_text("#+filetags: :theme:\n")  # the copy, beside the note
        note.write_text("#+SETUPFILE: theme.setup\n" + BODY)

        async def found():
            status, body = await daemon.get_json("/search", q="urlsetupotter")
            return status == 200 and [r for r in body["results"] if r["file"] == note.name]

        await wait_until(found, timeout=30)
    finally:
        daemon.stop()
