"""The ``arcology-oracle import`` command: chat logs written as org files under the roam
directory (the org files stay the only copy; the index is rebuilt from them).

Reads the whole export first, rendering and staging each conversation's file
(:mod:`arcology_oracle.importers.writing`), and writes only after every conversation was
read: a malformed export exits 2 with the file and the place, having written nothing; so
does one that cannot be read, and a write into the notes directory that fails (a full
disk) exits 1, saying so, with nothing imported.
Importing the same export again rewrites nothing (the IDs and the text are derived from
it alone); a changed export updates the files it changed; files edited since their import
are skipped with a warning. A transcript, subtitle or markdown file is known by its file
name alone: another conversation under a name imported before (another day's
``standup.txt``) is imported beside the earlier one, never over it (:func:`_rendered`).
The command does not index: the daemon's watcher indexes the
new files (a private tag keeps them out), and ``arcology-oracle index`` does without it.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import math
import sys
from pathlib import Path

from .cli_progress import ProgressBar
from .config import Settings
from .errors import BadRequest, ConfigError, OracleError
from .importers import DEFAULT_DIRS, EXTENSIONS, FORMATS, Conversation, MalformedExport, read_export
from .importers.id_links import IdLinks
from .importers.render import RenderedFile, dialogue, has_text, render, stamp_moment
from .importers.writing import DuplicateConversation, ImportBatch
from .notes.capture import clean_tags
from .notes.files import notes_dir_problem, resolve_inside

LIST_AT_MOST = 20
# Off a terminal, a JSON export this large logs a line per 10% read.
LOG_PROGRESS_BYTES = 8 * 2**20


def add_import_parser(sub, common, roam_dir_default: str) -> None:
    """Add ``import`` to the command's subparsers (``roam_dir_default``: where the notes
    directory comes from without one, in the words of the other commands' help)."""
    p = sub.add_parser("import", parents=[common], help="write chat logs (ChatGPT, Claude, transcripts, subtitles, markdown) as org files")
    p.add_argument("format", choices=FORMATS, help="what FILE is")
    p.add_argument("file", type=Path, help="the export (for transcript, vtt, srt and markdown also a directory of them)")
    p.add_argument("--into", type=Path, help="where the files go, inside the roam directory"
                   " (default imported/FORMAT; imported/transcripts for transcript, vtt and srt)")  # fmt: skip
    p.add_argument("--roam-dir", type=Path, help=f"the org-roam directory ({roam_dir_default})")
    p.add_argument("--tag", action="append", default=[], metavar="TAG", help="tag every imported file, e.g. private (repeatable)")
    p.add_argument("--me", default="Me", metavar="NAME", help="the speaker name of your own turns in chat exports (default Me)")
    p.add_argument("--speaker", action="append", default=[], metavar="NAME", help="markdown: one more speaker name (repeatable)")
    p.add_argument("--date", metavar="'YYYY-MM-DD[ HH:MM]'", help="when a transcript, subtitle or markdown file began")
    p.add_argument("--session-gap", type=float, default=30, metavar="MINUTES", help="a new dated heading after a pause this long (default 30)")
    p.set_defaults(func=cmd_import)


def cmd_import(settings: Settings, args) -> int:
    try:
        tags = clean_tags(list(args.tag))
    except BadRequest as exc:
        raise ConfigError(str(exc)) from None
    roam = settings.roam_dir
    if (problem := notes_dir_problem(roam)) is not None:
        raise ConfigError(problem)
    target = _target(roam, args.into or Path(DEFAULT_DIRS[args.format]))
    if not args.file.exists():
        raise ConfigError(f"no such file: {args.file}")
    if not math.isfinite(args.session_gap) or args.session_gap <= 0:
        raise ConfigError(f"--session-gap {args.session_gap}: expected a positive number of minutes")
    try:
        gap = datetime.timedelta(minutes=args.session_gap)
    except OverflowError:
        raise ConfigError(f"--session-gap {args.session_gap}: too many minutes") from None
    json_export = args.format in ("chatgpt", "claude")
    long = json_export and args.file.is_file() and args.file.stat().st_size >= LOG_PROGRESS_BYTES
    bar = ProgressBar("importing", show=_megabytes if json_export else None, log_every=10 if long else 0)
    batch = ImportBatch(roam, target, settings.exclude_globs)
    id_links = IdLinks(roam)  # a chat's id: links to IDs no note has are quieted
    conversations = empty = 0
    try:
        for conversation in read_export(
            args.format, args.file, me=args.me, date=_date(args.date), speakers=args.speaker, on_progress=bar.update
        ):
            conversations += 1
            if not any(has_text(m.text) for m in conversation.messages):
                empty += 1
                continue
            try:
                batch.stage(_rendered(batch, id_links.quieted(conversation), tags, gap))
            except OSError as exc:  # staging into the notes directory (a full disk), not reading the export
                raise _WriteError(exc) from None
    except (MalformedExport, DuplicateConversation) as exc:
        bar.finish()
        batch.discard()
        print(f"arcology-oracle: import: {exc}; nothing was imported", file=sys.stderr)
        return 2
    except _WriteError as exc:
        bar.finish()
        batch.discard()
        raise OracleError(f"cannot write into {roam}: {exc.reason}; nothing was imported") from None
    except OSError as exc:
        bar.finish()
        batch.discard()
        raise ConfigError(f"cannot read {exc.filename or args.file}: {exc.strerror}; nothing was imported") from None
    except BaseException:
        batch.discard()
        raise
    bar.finish()
    summary = batch.commit()
    where = target.resolve().relative_to(roam.resolve()).as_posix()
    say(
        f"{args.file.name}: {conversations} conversation{'' if conversations == 1 else 's'}"
        f"{f' ({empty} empty, left out)' if empty else ''} -> {where}/: "
        f"{len(summary.added)} added, {len(summary.updated)} updated, {len(summary.unchanged)} unchanged, "
        f"{len(summary.skipped)} skipped"
    )
    for kind, paths in (("added", summary.added), ("updated", summary.updated)):
        if len(summary.added) + len(summary.updated) <= LIST_AT_MOST:
            for path in paths:
                say(f"  {kind}: {path}")
    for note in summary.notes:
        say(f"  {note}")
    for path, reason in summary.skipped.items():
        print(f"  skipped: {path}: {reason}", file=sys.stderr)
    if summary.added or summary.updated:
        print("the daemon indexes them when it sees them (without it: arcology-oracle index)")
    return 0


def say(line: str) -> None:
    """Print ``line``, a name in it holding bytes that are not UTF-8 (a file named in
    Latin-1) with those as ``\\xNN``: standard output takes Unicode only where the locale
    is UTF-8, and the import is done by then."""
    print(line.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


class _WriteError(Exception):
    """Staging a file into the notes directory failed (``reason``: the system's)."""

    def __init__(self, exc: OSError):
        super().__init__(exc)
        self.reason = exc.strerror or str(exc)


def _rendered(batch: ImportBatch, conversation: Conversation, tags: list[str], gap: datetime.timedelta) -> RenderedFile:
    """``conversation``'s file, under a key whose file (if there is one) holds this
    conversation (:meth:`ImportBatch.holds_another`). A transcript, subtitle or markdown
    conversation is keyed by its file's name, so an earlier file of that name may hold
    another one: then it is keyed by its name and its first date and turn (the same
    conversation, grown, keeps updating that file), else by its name and all of its
    turns, and imported beside the earlier file. One dated by its file's modification
    time (a guess) is first taken at the date the earlier file has: the same log copied,
    or grown another day, is that conversation, not another."""
    rendered = render(conversation, tags=tags, gap=gap)
    if conversation.format not in EXTENSIONS or (earlier := batch.holds_another(rendered)) is None:
        return rendered
    if conversation.guessed and (dated := _dated_as_before(batch, conversation, rendered)):
        again = render(dated, tags=tags, gap=gap)
        if batch.holds_another(again) is None:
            return again
    stamp, turns = dialogue(rendered.text)
    for part in (turns[:1], turns):
        digest = hashlib.sha256("\n\n".join([stamp, *part]).encode("utf-8", "surrogateescape")).hexdigest()[:16]
        rendered = render(dataclasses.replace(conversation, key=f"{conversation.key}\x1f{digest}"), tags=tags, gap=gap)
        if batch.holds_another(rendered) is None:
            break
    batch.summary.notes.append(f"{conversation.key}: kept apart from {earlier}, another conversation of that file name "
                               "(another first date or other turns)")  # fmt: skip
    return rendered


def _dated_as_before(batch: ImportBatch, conversation: Conversation, rendered: RenderedFile) -> Conversation | None:
    """``conversation``, whose file ``rendered`` is, with its times moved so that its first
    heading has the time the earlier file of its ID has on its own; None without one."""
    found = batch.earlier(rendered)
    before, now = (stamp_moment(dialogue(text)[0]) for text in (found[1] if found else "", rendered.text))
    if before is None or now is None:
        return None
    shift = before - now
    return dataclasses.replace(
        conversation, time=conversation.time and conversation.time + shift,
        messages=[dataclasses.replace(m, time=m.time and m.time + shift) for m in conversation.messages],
    )  # fmt: skip


def _target(roam: Path, into: Path) -> Path:
    """``into`` (relative to the roam directory, or absolute inside it) as a path."""
    try:
        if into.is_absolute():
            rel = into.resolve().relative_to(roam.resolve()).as_posix()
            return resolve_inside(roam, rel) if rel != "." else roam.resolve()
        return resolve_inside(roam, into.as_posix())
    except ValueError:
        raise ConfigError(f"--into {into} is not inside the roam directory {roam}") from None


def _date(value: str | None) -> datetime.datetime | None:
    if value is None:
        return None
    try:
        return datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        raise ConfigError(f"--date {value!r}: expected YYYY-MM-DD or 'YYYY-MM-DD HH:MM'") from None


def _megabytes(done: int, total: int) -> str:
    return f"{done / 1e6:.1f} of {total / 1e6:.1f} MB"
