"""The only code that writes notes (index/note_io.py), on real files: appends in place
(links, modes and other writers' bytes kept), removes under a write lease, refuses odd
files with a message naming them, never blocks on a FIFO, leaves no temporary file."""

from __future__ import annotations

import datetime
import os
import stat
import subprocess
import sys
import threading

import pytest

from arcology_oracle.errors import Conflict
from arcology_oracle.index import note_files, note_io
from arcology_oracle.index.aside import remove_stale_temp_files
from arcology_oracle.notes.capture import Changed, make_capture, plan_forget, render_capture

NOW = datetime.datetime(2026, 3, 14, 9, 26)
REL = "daily/d.org"


@pytest.fixture(autouse=True)
def leases():
    note_io.prepare_leases()  # pytest runs tests in the main thread, as the daemon's setup


@pytest.fixture
def root(tmp_path):
    (tmp_path / "daily").mkdir()
    return tmp_path


def append(root, text="remember the milk", rel=REL, node_id="c-1", head=None, known=None):
    entry = make_capture(text, title=None, tags=(), now=NOW, node_id=node_id)
    return note_io.append_note(
        root, rel, lambda eol, lead, real: render_capture(entry, rel=real, eol=eol, lead=lead), head, known
    )


def forget(root, node_id="c-1", rel=REL):
    return note_io.remove_from_note(root, rel, lambda data, real: plan_forget(data, real, node_id))


def test_append_then_remove_in_place_keeps_links_and_mode(root):
    real = root / "daily" / "real.org"
    real.write_bytes(b"* Mine\ntext")  # no final newline
    os.chmod(real, 0o640)
    os.link(real, root / "hard.org")
    os.symlink("real.org", root / REL)
    inode = real.stat().st_ino
    done = append(root)
    assert done.real_rel == "daily/real.org" and done.line == 3 and done.after is not None
    assert (root / REL).is_symlink() and real.stat().st_ino == inode and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert (root / "hard.org").read_bytes() == real.read_bytes()
    assert real.read_bytes().startswith(b"* Mine\ntext\n* remember the milk\n")
    removal, new, _ = forget(root)
    assert real.read_bytes() == new == b"* Mine\ntext" and removal.line == 3
    assert (root / REL).is_symlink() and real.stat().st_ino == inode and (root / "hard.org").read_bytes() == new
    assert sorted(p.name for p in (root / "daily").iterdir()) == ["d.org", "real.org"]


def test_a_link_out_of_the_roam_dir_is_refused(root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("synced") / "day.org"
    outside.write_bytes(b"* Elsewhere\n")
    os.symlink(outside, root / REL)
    assert note_io.leads_out(root, REL)
    with pytest.raises(note_io.LeadsOut, match="outside the notes directory"):
        append(root)
    assert outside.read_bytes() == b"* Elsewhere\n"


def test_a_note_without_write_bits_is_refused_even_for_root(root):
    path = root / REL
    path.write_bytes(b"* Mine\n")
    os.chmod(path, 0o444)
    with pytest.raises(Conflict, match="read-only"):
        append(root)
    assert path.read_bytes() == b"* Mine\n"


def test_odd_paths_are_conflicts_naming_the_path(root):
    (root / REL).mkdir()
    with pytest.raises(Conflict, match=f"{REL} is a directory"):
        append(root)
    (root / "daily2").write_bytes(b"a file")
    with pytest.raises(Conflict, match="daily2 is not a directory"):
        append(root, rel="daily2/d.org")


def test_a_fifo_is_refused_at_once_and_blocks_nothing(root):
    os.mkfifo(root / REL)
    with pytest.raises(Conflict, match="not a regular file \\(a FIFO\\)"):
        append(root)
    with pytest.raises(Conflict, match="FIFO"):
        forget(root)
    assert note_io.read_note(root, REL) is None


@pytest.mark.parametrize("bom", [b"\xff\xfe", b"\xfe\xff"])
def test_utf16_and_bytes_not_utf8_are_refused(root, bom):
    path = root / REL
    path.write_bytes(bom + "* Mine\n".encode("utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"))
    before = path.read_bytes()
    with pytest.raises(Conflict, match="UTF-16"):
        append(root)
    path.write_bytes(b"* Caf\xe9\n")
    with pytest.raises(Conflict, match="not UTF-8"):
        append(root)
    assert path.read_bytes() == b"* Caf\xe9\n" and before


def test_a_utf8_bom_stays(root):
    path = root / REL
    path.write_bytes(b"\xef\xbb\xbf* Mine\n")
    append(root)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf* Mine\n* remember")
    forget(root)
    assert path.read_bytes() == b"\xef\xbb\xbf* Mine\n"


def test_a_new_note_gets_the_head_and_the_known_state_is_used(root):
    done = append(root, head=b"#+title: New\n")
    path = root / REL
    assert path.read_bytes().startswith(b"#+title: New\n* remember the milk\n") and done.line == 2
    assert done.after is None  # a new file's head is read again at the next capture
    second = append(root, node_id="c-2")
    third = append(root, node_id="c-3", known=second.after)
    assert third.before is second.after and third.line == second.line + 8
    # Someone else's write (size and mtime change): the file is read again.
    with open(path, "ab") as fh:
        fh.write(b"typed\n")
    fourth = append(root, node_id="c-4", known=third.after)
    assert fourth.before is not third.after and fourth.before.lines == third.after.lines + 1


def test_the_known_state_is_not_used_once_another_program_rewrote_the_note_to_the_same_size_and_time(root):
    # Another program rewrote the daily in place, to the same size, and its time is the
    # one the daemon saw (the file system's clock had not moved on, or os.utime set it
    # back): the file's tags are now private, which a capture must read, not the state
    # it left. The change time (never set back) tells the two files apart.
    path = root / REL
    path.write_bytes(b"#+title: Day one of i\n* Mine\nmy text\n")
    first = append(root)
    assert first.after is not None and first.after.tags == ()
    st = path.stat()
    with open(path, "r+b") as f:
        f.write(b"#+filetags: :private:\n")  # as many bytes as the title line
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    second = append(root, "zorblax", node_id="c-2", known=first.after)
    assert second.before.tags == ("private",)


def test_forget_is_refused_while_another_program_holds_the_note_open(root):
    path = root / REL
    path.write_bytes(b"* Mine\n")
    append(root)
    before = path.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", f"import sys; f = open({str(path)!r}, 'ab'); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        # Wait until the holder has the file open (its fd shows in /proc).
        deadline = 200
        while deadline and not any(
            os.path.realpath(f"/proc/{holder.pid}/fd/{fd}") == str(path.resolve())
            for fd in os.listdir(f"/proc/{holder.pid}/fd")
        ):
            threading.Event().wait(0.01)
            deadline -= 1
        with pytest.raises(Conflict, match="open in another program"):
            forget(root)
        assert path.read_bytes() == before
    finally:
        holder.communicate(b"")
    forget(root)
    assert path.read_bytes() == b"* Mine\n"


def test_captures_and_forgets_lose_no_byte_of_a_racing_appender(root):
    """Another process appends a numbered line every moment, opening the file each time
    and without any lock, while captures and forgets run: every line arrives."""
    path = root / REL
    path.write_bytes(b"* Log\n")
    script = (
        "import os, sys\n"
        f"p = {str(path)!r}\n"
        "for i in range(int(sys.argv[1])):\n"
        "    fd = os.open(p, os.O_WRONLY | os.O_APPEND)\n"
        "    os.write(fd, b'appended line %d\\n' % i)\n"
        "    os.close(fd)\n"
    )
    appender = subprocess.Popen([sys.executable, "-c", script, "3000"])
    forgotten = refused = 0
    try:
        n = 0
        while appender.poll() is None:
            n += 1
            append(root, f"capture {n}", node_id=f"c-{n}")
            try:
                forget(root, node_id=f"c-{n}")
                forgotten += 1
            except (Changed, Conflict) as exc:
                # The appender's lines after the capture make it theirs; or it had the file open.
                assert "text was added below it" in str(exc) or "open in another program" in str(exc), exc
                refused += 1
    finally:
        appender.wait()
    lines = path.read_bytes().split(b"\n")
    got = [line for line in lines if line.startswith(b"appended line ")]
    assert got == [b"appended line %d" % i for i in range(3000)]
    assert forgotten + refused == n and n > 0
    print(f"{n} captures, {forgotten} forgotten, {refused} refused")


def test_stale_temporary_copies_are_removed(root):
    stale = root / "daily" / ".arcology-oracle-abcd1234.tmp"
    stale.write_bytes(b"a copy of private text")
    keep = root / "daily" / ".arcology-oracle-notes.txt"
    keep.write_bytes(b"not ours")
    assert remove_stale_temp_files([root, root / "daily"]) == 1
    assert not stale.exists() and keep.exists()


def test_a_created_note_that_cannot_be_removed_again_is_not_named_in_the_log(root, monkeypatch, caplog):
    # A daily created for a capture refused at once (the umask makes it read-only), whose
    # removal then fails: the log says so without its path (a new file is in no index,
    # and its folder may be a private one).
    def cannot(path, fd):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(note_files, "unlink_if_names", cannot)
    old = os.umask(0o222)
    try:
        with pytest.raises(Conflict, match="read-only"):
            append(root, rel="private-folder/2026-03-14.org", head=b"#+title: new\n")
    finally:
        os.umask(old)
    said = [r.getMessage() for r in caplog.records if "created for a capture that was refused" in r.getMessage()]
    assert len(said) == 1 and "not named: it may be private" in said[0], said
    assert "private-folder" not in said[0] and "2026-03-14" not in said[0], said
    assert (root / "private-folder" / "2026-03-14.org").read_bytes() == b""  # nothing written into it
