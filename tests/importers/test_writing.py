"""The import's writer on real files, in process: nothing lands before commit, and a
file that Emacs holds, that changed meanwhile or that is not the import's is left alone."""

from __future__ import annotations

import builtins
import os
import socket
import threading
from pathlib import Path

import pytest

from arcology_oracle.cli_import import _target
from arcology_oracle.errors import ConfigError
from arcology_oracle.importers import Message, read_export
from arcology_oracle.importers.existing import Existing
from arcology_oracle.importers.render import render
from arcology_oracle.importers.writing import DuplicateConversation, ImportBatch

FIXTURES = Path(__file__).parent / "fixtures"


def rendered(tags=()):
    return [render(c, tags=tags) for c in read_export("claude", FIXTURES / "claude.json")]


def test_nothing_lands_before_commit_and_permissions_are_kept(tmp_path):
    target = tmp_path / "chats"
    batch = ImportBatch(tmp_path, target)
    for r in rendered():
        batch.stage(r)
    assert not target.exists()  # staged in a hidden directory of the roam dir only
    assert [p.name for p in tmp_path.iterdir()][0].startswith(".arcology-import-")
    summary = batch.commit()
    assert len(summary.added) == 2 and [p.name for p in tmp_path.iterdir()] == ["chats"]
    first = target / rendered()[0].filename
    first.chmod(0o600)
    batch = ImportBatch(tmp_path, target)
    for r in rendered(tags=["garden"]):
        batch.stage(r)
    assert sorted(batch.commit().updated) == sorted(f"chats/{r.filename}" for r in rendered())
    assert first.stat().st_mode & 0o777 == 0o600 and "#+filetags: :garden:" in first.read_text()


def test_emacs_lock_a_change_meanwhile_and_a_stranger_are_skipped(tmp_path):
    target = tmp_path / "chats"
    batch = ImportBatch(tmp_path, target)
    for r in rendered():
        batch.stage(r)
    batch.commit()
    one, two = (target / r.filename for r in rendered())
    batch = ImportBatch(tmp_path, target)
    for r in rendered(tags=["garden"]):
        batch.stage(r)
    os.symlink(f"ana@{socket.gethostname()}.{os.getpid()}:0", one.with_name(".#" + one.name))
    two.write_text(two.read_text() + "\n")  # changed after it was staged
    before = one.read_bytes(), two.read_bytes()
    summary = batch.commit()
    assert summary.added == summary.updated == []
    assert set(summary.skipped) == {f"chats/{one.name}", f"chats/{two.name}"}
    assert "Emacs has unsaved edits" in summary.skipped[f"chats/{one.name}"]
    assert (one.read_bytes(), two.read_bytes()) == before
    # A file of the chosen name that holds another note's drawer is not the import's.
    one.with_name(".#" + one.name).unlink()
    one.write_text(":PROPERTIES:\n:ID:       someone-else\n:END:\n#+title: Mine\n")
    (target / "elsewhere").mkdir()
    batch = ImportBatch(tmp_path, target)
    batch.stage(rendered()[0])
    assert "holds another note" in batch.summary.skipped[f"chats/{one.name}"]
    with pytest.raises(DuplicateConversation):
        batch.stage(rendered()[0])
    batch.discard()
    assert not any(p.name.startswith(".arcology-import-") for p in tmp_path.iterdir())


def test_a_moved_file_is_found_by_its_id(tmp_path):
    target = tmp_path / "chats"
    batch = ImportBatch(tmp_path, target)
    for r in rendered():
        batch.stage(r)
    batch.commit()
    first = rendered()[0]
    (target / "garden").mkdir()
    os.rename(target / first.filename, target / "garden" / "blight.org")
    batch = ImportBatch(tmp_path, target)
    for r in rendered():
        batch.stage(r)
    assert batch.commit().unchanged == ["chats/garden/blight.org", f"chats/{rendered()[1].filename}"]


def test_into_must_stay_inside_the_roam_directory(tmp_path):
    assert _target(tmp_path, Path("chats/2024")) == tmp_path.resolve() / "chats" / "2024"
    assert _target(tmp_path, tmp_path / "chats") == tmp_path.resolve() / "chats"
    for outside in (Path("../elsewhere"), tmp_path.parent):
        with pytest.raises(ConfigError):
            _target(tmp_path, outside)


def test_a_directory_of_markdown_files_is_one_conversation_each(tmp_path):
    for name in ("b.md", "a.md"):
        (tmp_path / name).write_text(f"**User:** hello from {name}\n\n**Assistant:** hi\n")
    (tmp_path / "notes.txt").write_text("not markdown")
    got = [(c.key, c.messages[0].text) for c in read_export("markdown", tmp_path)]
    assert got == [("a.md", "hello from a.md"), ("b.md", "hello from b.md")]


def test_progress_off_a_terminal_logs_a_line_per_step():
    import io

    from arcology_oracle.cli_import import _megabytes
    from arcology_oracle.cli_progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar("importing", stream, show=_megabytes, log_every=25)
    for done in range(0, 100_000_001, 5_000_000):
        bar.update(done, 100_000_000)
    bar.finish()
    assert stream.getvalue().splitlines() == [
        f"importing: {p}% ({p:.1f} of 100.0 MB)" for p in (0, 25, 50, 75, 100)
    ]
    quiet = io.StringIO()
    ProgressBar("reading", quiet).update(5, 10)  # the index command's bar: silent off a terminal
    assert quiet.getvalue() == ""


def test_a_killed_imports_staging_is_removed_by_the_next_after_an_hour(tmp_path):
    stale, fresh = tmp_path / ".arcology-import-old_0000", tmp_path / ".arcology-import-new_0000"  # as mkdtemp names them
    for d in (stale, fresh):
        d.mkdir()
        (d / "0.tmp").write_text(rendered()[0].text)  # what an import stages: a rendering
    os.utime(stale, (0, 0))
    ImportBatch(tmp_path, tmp_path / "chats")
    assert not stale.exists() and fresh.exists()


def later(tags=()):
    """The fixture's chats as a later export has them: each with one more turn."""
    conversations = list(read_export("claude", FIXTURES / "claude.json"))
    for c in conversations:
        c.messages.append(Message("later", "Me", "One more question.", c.messages[-1].time))
    return [render(c, tags=tags) for c in conversations]


def test_an_update_keeps_the_files_tags_and_adds_the_new_ones(tmp_path):
    """Imported with --tag private, then again without: still private (never searchable)."""
    target = tmp_path / "chats"
    batch = ImportBatch(tmp_path, target)
    for r in rendered(tags=["private"]):
        batch.stage(r)
    batch.commit()
    batch = ImportBatch(tmp_path, target)
    for r in later():
        batch.stage(r)
    assert len(batch.commit().updated) == 2
    for r in later(tags=["private"]):
        assert (target / r.filename).read_bytes() == r.text.encode()
    batch = ImportBatch(tmp_path, target)
    for r in later(tags=["garden", "private"]):
        batch.stage(r)
    assert len(batch.commit().updated) == 2
    for r in later(tags=["private", "garden"]):  # the file's own tags first
        assert (target / r.filename).read_bytes() == r.text.encode()
    batch = ImportBatch(tmp_path, target)
    for r in later():
        batch.stage(r)
    assert len(batch.commit().unchanged) == 2


def imported(roam, target, chats, excludes=("attic/**",)):
    """``chats`` staged and committed by one import into ``target`` (``excludes`` as the
    index's): the import's summary."""
    batch = ImportBatch(roam, target, excludes)
    for r in chats:
        batch.stage(r)
    return batch.commit()

@pytest.mark.parametrize("place", ["attic", ".archive", "chats/.old"])
def test_a_chat_moved_where_the_index_does_not_look_is_neither_updated_nor_imported_again(tmp_path, place):
    """Moved to an excluded or hidden folder, then a later export: skipped, no second copy."""
    target = tmp_path / "chats"
    imported(tmp_path, target, rendered())
    first = rendered()[0]
    (tmp_path / place).mkdir()
    os.rename(target / first.filename, tmp_path / place / first.filename)
    before = (tmp_path / place / first.filename).read_bytes()
    summary = imported(tmp_path, target, later())
    assert summary.updated == [f"chats/{later()[1].filename}"] and summary.added == []
    assert "a place the index leaves out" in summary.skipped[f"{place}/{first.filename}"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.org")) == sorted(
        [f"{place}/{first.filename}", f"chats/{later()[1].filename}"]
    )
    assert (tmp_path / place / first.filename).read_bytes() == before


def test_a_chat_moved_out_of_the_target_is_updated_where_it_is(tmp_path):
    target = tmp_path / "chats"
    imported(tmp_path, target, rendered())
    first = rendered()[0]
    (tmp_path / "garden").mkdir()
    os.rename(target / first.filename, tmp_path / "garden" / "blight.org")
    assert imported(tmp_path, target, later()).updated == ["garden/blight.org", f"chats/{later()[1].filename}"]
    assert (tmp_path / "garden" / "blight.org").read_bytes() == later()[0].text.encode()
    assert not (target / first.filename).exists()
    # Imported into an excluded folder on purpose (--into attic/chats): updated there.
    attic = tmp_path / "attic" / "chats"
    batch = ImportBatch(tmp_path, attic, ("attic/**",))
    chats = [c for c in read_export("chatgpt", FIXTURES / "chatgpt.json") if c.messages]
    for c in chats:
        batch.stage(render(c))
    assert len(batch.commit().added) == 2
    batch = ImportBatch(tmp_path, attic, ("attic/**",))
    for c in chats:
        batch.stage(render(c, tags=["garden"]))
    assert batch.commit().updated == [f"attic/chats/{render(c).filename}" for c in chats]
    for c in chats:
        assert (attic / render(c).filename).read_bytes() == render(c, tags=["garden"]).text.encode()


def test_a_chat_emacs_auto_saved_since_its_last_save_is_skipped(tmp_path):
    # An Emacs that makes no lock files (create-lockfiles nil) leaves only its auto-save
    # file, newer than the note, while it holds unsaved edits: the update renamed the new
    # version over the note, and Emacs's next save of its buffer would drop it, or ask.
    target = tmp_path / "chats"
    imported(tmp_path, target, rendered())
    one, two = (target / r.filename for r in rendered())
    one.with_name("#" + one.name + "#").write_text("the user's unsaved edits")
    os.utime(one, ns=(1_000_000_000, 1_000_000_000))  # saved long before the auto-save
    before = one.read_bytes()
    summary = imported(tmp_path, target, rendered(tags=["garden"]))
    assert summary.updated == [f"chats/{two.name}"], summary
    assert "Emacs has unsaved edits" in summary.skipped[f"chats/{one.name}"]
    assert one.read_bytes() == before


@pytest.mark.parametrize("suffix", [".gpg", ".age"])
def test_a_chat_encrypted_since_its_import_is_not_imported_again_in_plain_text(tmp_path, suffix):
    """The user encrypted an imported chat (``M-x epa-encrypt-file``: ``NAME.org.gpg``,
    or age.el's ``.age``) and removed the plain file, here or moved elsewhere in the
    notes: its ``:ID:`` cannot be read any more, and a later import of the same export
    wrote the whole conversation again in plain text, where the daemon indexes it."""
    target = tmp_path / "chats"
    imported(tmp_path, target, rendered())
    first, second = rendered()
    (tmp_path / "vault").mkdir()
    for chat, where in ((first, target), (second, tmp_path / "vault")):
        plain = target / chat.filename
        (where / (chat.filename + suffix)).write_bytes(b"-----BEGIN PGP MESSAGE-----\n\x85\x02ciphertext\n")
        plain.unlink()
    summary = imported(tmp_path, target, rendered())
    assert summary.added == summary.updated == [], summary
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.org")) == []
    assert "encrypted" in summary.skipped[f"chats/{first.filename}"], summary.skipped
    assert "encrypted" in summary.skipped[f"chats/{second.filename}"], summary.skipped


def staged_batch(roam: Path) -> tuple[ImportBatch, Path, dict[str, bytes]]:
    """A batch with the export's files staged: its staging folder and those files' bytes."""
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered():
        batch.stage(r)
    (staging,) = (p for p in roam.iterdir() if p.name.startswith(".arcology-import-"))
    return batch, staging, {p.name: p.read_bytes() for p in staging.iterdir()}


def test_a_discarded_batch_removes_only_the_files_it_wrote(tmp_path, caplog):
    batch, staging, staged = staged_batch(tmp_path)
    assert sorted(staged) == ["0.tmp", "1.tmp"]
    batch.discard()
    assert not staging.exists()  # nothing else there: the folder goes
    # Put there meanwhile: a note of the user's, and a file of theirs at a staged name
    # (a version a commit swapped out and could not give back is one).
    batch, staging, staged = staged_batch(tmp_path)
    (staging / "mine.org").write_bytes(b"* My private note :private:\nkept\n")
    (staging / "1.tmp").unlink()
    (staging / "1.tmp").write_bytes(b"* Theirs\n")
    (staging / "sub").mkdir()
    (staging / "sub" / "deep.org").write_bytes(b"deep\n")
    batch.discard()
    left = {p.relative_to(staging).as_posix(): p.read_bytes() for p in staging.rglob("*") if p.is_file()}
    assert left == {"mine.org": b"* My private note :private:\nkept\n", "1.tmp": b"* Theirs\n", "sub/deep.org": b"deep\n"}
    said = [r.getMessage() for r in caplog.records if "staging folder" in r.getMessage()]
    assert len(said) == 1 and str(staging) in said[0], said
    assert not any(name in said[0] for name in ("mine", "1.tmp", "deep", "private")), said


def test_a_fifo_swapped_in_as_the_scan_opens_a_file_is_not_read(tmp_path, monkeypatch):
    """The scan for existing IDs lists ``swapped.org`` as a regular file; at the instant
    it opens it, a FIFO stands there. A blocking open would wait for a writer forever:
    here a writer is ready (so a blocking reader would get its bytes and an ID), which
    the scan must not take."""
    (tmp_path / "kept.org").write_text(":PROPERTIES:\n:ID: kept-id\n:END:\n#+title: K\n")
    victim = tmp_path / "swapped.org"
    victim.write_text(":PROPERTIES:\n:ID: file-id\n:END:\n#+title: S\n")
    real_os_open, real_open, swapped = os.open, builtins.open, threading.Event()

    def feed_the_fifo():
        fd = real_os_open(victim, os.O_WRONLY)  # waits for a reader: the scan, or the test below
        try:
            os.write(fd, b":PROPERTIES:\n:ID: fifo-id\n:END:\n")
        except BrokenPipeError:  # the scan opened it without waiting and closed it unread
            pass
        os.close(fd)

    writer = threading.Thread(target=feed_the_fifo, daemon=True)

    def swap(path):
        if not swapped.is_set() and os.fspath(path) == os.fspath(victim):
            swapped.set()
            victim.unlink()
            os.mkfifo(victim)
            writer.start()

    def os_open(path, *args, **kwargs):
        swap(path)
        return real_os_open(path, *args, **kwargs)

    def builtin_open(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)):
            swap(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", builtin_open)
    found = Existing(tmp_path, tmp_path / "chats")
    monkeypatch.undo()
    assert swapped.is_set()
    fd = os.open(victim, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer finish if the scan did not read it
    writer.join()
    os.close(fd)
    assert found.ids == {"kept-id": tmp_path / "kept.org"}
