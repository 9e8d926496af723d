"""A capture appended without a write lease while another program writes the note's end
(index/unleased_lead.py): the read of the note saw a line of another program's write cut
short (a reader can see the first page of a write before the next), or another program
appended between the read and the write. The capture's hash must cover the note as it
ended where the capture landed, so that forgetting it gives back every byte of the other
program's and none of the capture's. Real files; every byte is compared."""

from __future__ import annotations

import logging

import pytest

from arcology_oracle.index import note_io, unleased_lead
from arcology_oracle.notes.capture import Changed, make_capture, plan_forget, render_capture
from tests.emacs_batch import emacs_env
from tests.index.test_note_io_races import NOW, REL, leases, root  # noqa: F401 (fixtures)
from tests.org_reading import OrgProcess


def unleased_append(root, monkeypatch, *, meanwhile=None, read_cut=0, later_lease=True, before_lease=None):
    """A capture appended without a lease (the append's is refused; a later one is
    granted when ``later_lease``, after ``before_lease()`` ran, as another program that
    had the note open until then); ``meanwhile()`` runs once between the read of the
    note and the write; the read misses the last ``read_cut`` bytes, as a read of a
    note while another program's write to it is half done."""
    real_take, real_read = note_io.take_lease, note_io.read_all
    asked = []

    def take_lease(fd, attempts):
        asked.append(attempts)
        if len(asked) > 1 and before_lease:
            before_lease()
        return later_lease and len(asked) > 1 and real_take(fd, attempts)

    monkeypatch.setattr(note_io, "take_lease", take_lease)
    monkeypatch.setattr("arcology_oracle.index.unleased_lead.take_lease", take_lease)
    monkeypatch.setattr(note_io, "read_all", lambda fd: real_read(fd)[: -read_cut or None])
    entry = make_capture("remember the milk", title=None, tags=(), now=NOW, node_id="c-1")
    waiting = [meanwhile] if meanwhile else []

    def build(eol, lead, real):
        while waiting:
            waiting.pop()()
        return render_capture(entry, rel=real, eol=eol, lead=lead)

    done = note_io.append_note(root, REL, build, None)
    monkeypatch.undo()
    note_io.prepare_leases()
    return done


def forget(root):
    return note_io.remove_from_note(root, REL, lambda data, real: plan_forget(data, real, "c-1"))


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("cut", [1, 5], ids=["line ending", "words"])
def test_a_capture_after_a_torn_read_of_a_whole_line_is_forgotten_to_the_byte(root, tmp_path, monkeypatch, eol, cut):
    """The note ends with a whole line; the read saw it without its last ``cut`` bytes
    (no line ending): the capture hashed the end of a line of text, where it landed
    after a line ending, making an empty line. Org reads the user's heading and the
    capture's, the user's line under the first."""
    path = root / REL
    mine = b"* Log" + eol + b"appended line 7" + eol
    path.write_bytes(mine)
    done = unleased_append(root, monkeypatch, read_cut=cut)
    data = path.read_bytes()
    assert data.startswith(mine + eol + b"* remember the milk" + eol) and done.line == 4
    assert data.splitlines()[done.line - 1] == b"* remember the milk"
    with OrgProcess(emacs_env(tmp_path)) as org:
        read = org.read(path)
    assert [(h.title, h.line) for h in read.headings] == [("Log", 1), ("remember the milk", 4)]
    forget(root)
    assert path.read_bytes() == mine


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_a_line_appended_without_its_ending_meanwhile_keeps_its_bytes_when_the_capture_goes(root, monkeypatch, eol):
    """Another program appends a line without a line ending between the read (which saw
    a final line ending) and the write: the capture's separator ends that line, and
    forgetting the capture gives the note back as that program left it."""
    path = root / REL
    mine = b"* Mine" + eol + b"text" + eol
    path.write_bytes(mine)
    theirs = b"their line without newline"

    def other_writer():
        with open(path, "ab") as fh:
            fh.write(theirs)

    done = unleased_append(root, monkeypatch, meanwhile=other_writer)
    data = path.read_bytes()
    assert data.startswith(mine + theirs + eol + b"* remember the milk" + eol), data
    assert data.splitlines()[done.line - 1] == b"* remember the milk" and done.line == 4
    forget(root)
    assert path.read_bytes() == mine + theirs


def test_without_any_lease_the_capture_keeps_its_hash_as_read_and_the_log_says_so(root, monkeypatch, caplog):
    """Another program keeps the note open throughout: the hash line is not rewritten
    (no lease: another program could write there meanwhile); forgetting is refused and
    no byte changes."""
    path = root / REL
    mine = b"* Log\nappended line 7\n"
    path.write_bytes(mine)
    with caplog.at_level(logging.WARNING, logger="arcology_oracle.index.unleased_lead"):
        unleased_append(root, monkeypatch, read_cut=1, later_lease=False)
    assert "keeps a hash of the note as read (open in another program)" in caplog.text
    data = path.read_bytes()
    assert data.startswith(mine + b"\n* remember the milk\n")
    with pytest.raises(Changed):
        forget(root)
    assert path.read_bytes() == data


def test_the_end_of_the_note_is_read_again_under_the_lease_before_the_hash_is_rewritten(root, monkeypatch, caplog):
    """Another program, which held the note open, ends its last line otherwise (its line
    ending written over in place) before it closes it and the lease is granted: the
    hash is set for the note as it ends then, so forgetting the capture gives that
    program's bytes back, not a hash of an end seen before the lease."""
    path = root / REL
    mine = b"* Log\nappended line 7\n"
    path.write_bytes(mine)

    def ends_its_line_otherwise():  # the line ending before the capture's own, made text
        with open(path, "r+b") as fh:
            fh.seek(len(mine) - 1)
            fh.write(b"x")

    with caplog.at_level(logging.WARNING, logger="arcology_oracle.index.unleased_lead"):
        unleased_append(root, monkeypatch, read_cut=1, before_lease=ends_its_line_otherwise)
    assert "forgetting it will be refused" not in caplog.text  # it is not
    data = path.read_bytes()
    assert data.startswith(b"* Log\nappended line 7x\n* remember the milk\n"), data
    forget(root)
    assert path.read_bytes() == b"* Log\nappended line 7x"


def test_a_capture_written_is_a_success_whatever_its_settling_meets(root, monkeypatch, caplog):
    """An I/O error while the note's end is read again after the write: the capture is in
    the note, so the append succeeds (a retry would write it twice), and the log says so."""
    path = root / REL
    path.write_bytes(b"* Log\nappended line 7\n")

    def failing(data, st):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(unleased_lead, "note_state", failing)
    with caplog.at_level(logging.WARNING, logger="arcology_oracle.index.unleased_lead"):
        done = unleased_append(root, monkeypatch, read_cut=1)
    assert done.line == 4 and path.read_bytes().count(b"* remember the milk") == 1
    assert "keeps a hash of the note as read (Input/output error)" in caplog.text
