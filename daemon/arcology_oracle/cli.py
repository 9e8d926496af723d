"""The ``arcology-oracle`` command: index, search, similar, status, serve, ask, summarize, import.

Exit codes: 0 success, 1 an operation failed (message on stderr), 2 bad usage or
configuration. Domain errors are turned into one-line messages here, never tracebacks.
The commands that print answers (search, similar, ask, summarize) are in
:mod:`.cli_answers`, ``import`` in :mod:`.cli_import`, ``index`` in :mod:`.cli_index`;
here are the parser, the settings, and the other commands that keep the index or serve it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from . import __version__
from .cli_answers import cmd_ask, cmd_search, cmd_similar, cmd_summarize, with_index
from .cli_index import cmd_index
from .cli_progress import end_line, end_line_first
from .config import DEFAULT_PORT, Settings, load_settings
from .errors import BadRequest, ConfigError, NotFound, OracleError

log = logging.getLogger("arcology_oracle")


# -- commands -------------------------------------------------------------------------


def cmd_status(settings: Settings, args) -> int:
    async def run(index):
        status = await index.status()
        if args.json:
            print(json.dumps(status, indent=2))
        else:
            emb = status["embedder"]
            print(f"roam dir   {status['roam_dir']}")
            print(f"database   {status['db_path']}")
            print(f"files      {status['files']}")
            print(f"headings   {status['headings']} ({status['nodes']} nodes)")
            print(f"chunks     {status['chunks']} ({status['embedded']} embedded, {status['pending']} pending)")
            print(f"model      {emb['model']} at {emb['host']} ({emb['dims'] or '?'} dims)")
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_doctor(settings: Settings, args) -> int:
    """Check the index against the notes; with --repair fix it. Exit 1 if problems remain."""
    from .index.doctor import diagnose, repair
    from .store import Store

    with ExitStack() as held:
        if args.repair:  # the only writer (index/doctor.py): refused while a daemon holds the database
            from .http.server import lock_database
            from .index.notes_claim import NotesClaimed, claim_notes

            busy = f"a daemon is using the database {settings.db_path}: stop it before `doctor --repair`"
            for lock in (lambda: lock_database(settings.db_path, busy),
                         lambda: claim_notes(settings.db_path, settings.roam_dir)):  # fmt: skip
                try:
                    if (fd := lock()) is not None:
                        held.callback(os.close, fd)
                except NotesClaimed as exc:  # (an index of another directory: notes_claim.py)
                    raise OracleError(f"`arcology-oracle index` is writing the notes of {exc.holder} into "
                                      f"{settings.db_path}: wait for it to end before `doctor --repair`"
                                      ) from None  # fmt: skip
        store = Store.open(settings.db_path)
        try:
            if args.repair:
                before, after = repair(settings, store)
            else:
                before = after = diagnose(settings, store)
        finally:
            store.close()
    if args.json:
        print(json.dumps({"before": before.as_dict(), "after": after.as_dict()}, indent=2))
    else:
        for line in before.problems() or ["the index agrees with the notes"]:
            print(("found: " if not before.ok else "") + line)
        if args.repair and not before.ok:
            print("after repair: " + ("; ".join(after.problems()) or "the index agrees with the notes"))
        elif before.notes_dir_missing:
            print("give the notes directory: `arcology-oracle doctor DIR`")
        elif not before.ok and not before.other_notes_dir:  # (that one says what to do)
            print("run `arcology-oracle doctor --repair` to fix (stop the daemon first)")
    return 0 if after.ok else 1


def cmd_serve(settings: Settings, args) -> int:
    """Run the daemon. The MCP port is bound first, as run_server binds its own: one in use
    is an error (exit 2) before anything is touched, the notes' clean-up included."""
    from .http.app import run_server
    from .index.recovery import recover_at_start

    mcp_socket = None
    if settings.mcp_port is not None:
        from .mcp_server.http_transport import attach, bind

        mcp_socket = bind(settings.host, settings.mcp_port)

    def setup(app) -> None:  # run_server calls it holding the daemon's locks, before the app (its index) starts
        recover_at_start(settings)
        if mcp_socket is not None:
            attach(app, settings, mcp_socket)

    try:
        return run_server(settings, setup=setup)
    finally:
        if mcp_socket is not None:
            mcp_socket.close()


def cmd_mcp(settings: Settings, args) -> int:
    from .mcp_server.stdio import run_stdio

    return run_stdio(settings)


# -- argument parsing ---------------------------------------------------------------

# Where the commands that take a notes directory take it from without one (settings_from_args).
ROAM_DIR_DEFAULT = "default: the configured roam_dir, else the one the index was read from"


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, help="TOML config file (default: $XDG_CONFIG_HOME/arcology-oracle/config.toml)")
    common.add_argument("--db", type=Path, help="index database (default: $XDG_DATA_HOME/arcology-oracle/index.sqlite3; env ARCOLOGY_ORACLE_DB)")
    common.add_argument("--ollama-host", help="Ollama URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
    common.add_argument("--embed-model", help="embedding model (default: nomic-embed-text)")
    common.add_argument("-v", "--verbose", action="store_true", help="log debug messages (the daemon's own, not its libraries')")

    parser = argparse.ArgumentParser(
        prog="arcology-oracle", description="Index org-roam notes by heading and ask them questions with a local LLM."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("index", parents=[common], help="index (or re-index) a roam directory, then embed what is pending")
    _roam_dir_argument(p)
    p.add_argument("--no-embed", action="store_true", help="only read the notes; leave embeddings pending")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", parents=[common], help="search headings (hybrid, or keyword-only without vectors)")
    p.add_argument("query", type=_text)
    p.add_argument("-k", type=_count(100), default=10, help="number of results, 1 to 100 (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("similar", parents=[common], help="headings similar to a node, a heading or a text")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--node", type=_text, help="a node ID")
    group.add_argument("--file", type=_text, help="a file relative to the roam dir (with --line)")
    group.add_argument("--text", type=_text, help="free text")
    p.add_argument("--line", type=_line, default=1, help="the heading at this line of --file (default 1)")
    p.add_argument("-k", type=_count(100), default=10, help="number of results, 1 to 100 (default 10)")
    p.add_argument("--exclude-linked", action="store_true", help="hide nodes already linked from or to the node")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_similar)

    p = sub.add_parser("status", parents=[common], help="show what is indexed")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("doctor", parents=[common], help="check the index against the notes (and --repair it)")
    _roam_dir_argument(p)
    p.add_argument("--repair", action="store_true", help="fix what is found (stop the daemon first)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("serve", parents=[common], help="run the daemon: watch the notes and answer over HTTP")
    p.add_argument("--roam-dir", type=Path, help=f"the org-roam directory to watch ({ROAM_DIR_DEFAULT})")
    p.add_argument("--host", help="address to bind (default 127.0.0.1; any other needs a token)")
    p.add_argument("--port", type=int, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--token-file", type=Path, help="file holding the bearer token clients must send")
    p.add_argument("--allow-host", action="append", dest="allowed_hosts", metavar="NAME",
                   help="also answer requests for this host name, e.g. a Tailscale MagicDNS name (repeatable)")  # fmt: skip
    p.add_argument("--mcp-port", type=int, help="also serve MCP (streamable HTTP) at http://HOST:PORT/mcp")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", parents=[common], help="an MCP server on stdio over the running daemon (for AI clients)")
    p.add_argument("--url", dest="daemon_url", help="the daemon's URL (default: daemon_url, else http://host:port)")
    p.add_argument("--token-file", type=Path, help="file holding the daemon's bearer token")
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("ask", parents=[common], help="ask a question; the answer streams, grounded in your notes")
    p.add_argument("question", nargs="?", type=_text, default="", help="the question (may be empty with --buffer)")
    p.add_argument("--buffer", type=Path, help="a file whose text the question is about ('-' for stdin)")
    p.add_argument("-k", type=_count(50), default=8, help="at most this many notes, 1 to 50 (default 8)")
    p.add_argument("--model", type=_text, help="chat model (default: the configured chat_model)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("summarize", parents=[common], help="summarize a note (cached until it changes)")
    p.add_argument("node", type=_text, help="the node ID")
    p.add_argument("--question", type=_text, help="focus the summary on this question (not cached)")
    p.add_argument("-k", type=_count(50), default=5, help=argparse.SUPPRESS)
    p.add_argument("--model", type=_text, help="chat model (default: the configured chat_model)")
    p.set_defaults(func=cmd_summarize)

    from .cli_import import add_import_parser

    add_import_parser(sub, common, ROAM_DIR_DEFAULT)
    return parser


def _count(high: int):
    """An argparse type: an integer in ``[1, high]`` (how many results, or a line), as the
    HTTP API takes them."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not 1 <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from 1 to {high}, not {value}")
        return value

    return parse


def _text(text: str) -> str:
    """An argparse type: text sent to the index or a model (a query, a node ID, a note's
    path), which must be UTF-8; an argument of other bytes ended in a traceback."""
    from .notes.files import is_utf8, shown_name

    if not is_utf8(text):
        raise argparse.ArgumentTypeError(f"not UTF-8: {shown_name(text)}")
    return text


def _line(text: str) -> int:
    """An argparse type: a line number, as the HTTP API takes it."""
    from .http.schemas import MAX_LINE  # (pydantic and the API's models: not for every command)

    return _count(MAX_LINE)(text)


def _roam_dir_argument(p: argparse.ArgumentParser) -> None:
    """The notes directory as ``DIR`` or as ``--roam-dir DIR``, the way ``serve`` takes it."""
    where = f"the org-roam directory ({ROAM_DIR_DEFAULT})"
    p.add_argument("roam_dir", type=Path, nargs="?", help=where)
    p.add_argument("--roam-dir", type=Path, dest="roam_dir_option", metavar="ROAM_DIR", help="the same as ROAM_DIR")


def _roam_dir(args) -> Path | None:
    given = {d for d in (getattr(args, "roam_dir", None), getattr(args, "roam_dir_option", None)) if d is not None}
    if len(given) > 1:
        raise ConfigError("two roam directories given: " + " and ".join(map(str, sorted(given))))
    return next(iter(given), None)


def settings_from_args(args) -> Settings:
    overrides: dict[str, Any] = {
        "db_path": args.db,
        "ollama_host": args.ollama_host,
        "embed_model": args.embed_model,
        "roam_dir": _roam_dir(args),
        "host": getattr(args, "host", None),
        "port": getattr(args, "port", None),
        "allowed_hosts": getattr(args, "allowed_hosts", None),
        "mcp_port": getattr(args, "mcp_port", None),
        "daemon_url": getattr(args, "daemon_url", None),
    }
    token_file = getattr(args, "token_file", None)
    if token_file is not None:
        try:
            overrides["token"] = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token file {token_file}: {exc.strerror}") from None
        except UnicodeDecodeError:  # (a traceback)
            raise ConfigError(f"token file {token_file} is not UTF-8 text") from None
        if not overrides["token"]:
            raise ConfigError(f"token file {token_file} is empty")
    settings = load_settings(config_file=args.config, overrides=overrides)
    if args.command == "mcp":  # (it asks the daemon, maybe of another machine: the database here is none of its)
        return settings
    from .store.db import remembered_embed_model, remembered_notes_dir

    if "roam_dir" not in settings.model_fields_set:  # no directory given anywhere: the index's own
        if (remembered := remembered_notes_dir(settings.db_path)) is not None:
            settings = settings.model_copy(update={"roam_dir": Path(remembered)})
    if "embed_model" not in settings.model_fields_set:  # nor a model: the index's (another drops every vector)
        if (model := remembered_embed_model(settings.db_path)) is not None:
            settings = settings.model_copy(update={"embed_model": model})
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.basicConfig(level=logging.INFO if args.command == "serve" else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # -v: our debug messages only (watchdog's name every file it sees change, private ones too).
    log.setLevel(logging.DEBUG if args.verbose else logging.NOTSET)
    for handler in logging.getLogger().handlers:
        handler.addFilter(end_line_first)
    try:
        settings = settings_from_args(args)
        return args.func(settings, args)
    except (ConfigError, BadRequest) as exc:  # (BadRequest: the arguments' values, e.g. an empty query)
        _say(exc)
        return 2
    except NotFound as exc:
        _say(exc)
        return 1
    except OracleError as exc:
        _say(exc)
        return 1
    except KeyboardInterrupt:
        end_line()  # (the shell's prompt then starts a line of its own)
        if args.command == "index":  # (stopped at its next commit: index/indexer.py Indexer.stop)
            _say("interrupted: what was stored is kept; `arcology-oracle index` goes on from there")
        return 130
    except BrokenPipeError:  # `arcology-oracle search x | head -1`: the reader is gone, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # for the flush at exit
        return 1
    except Exception as exc:
        from .store.db import DatabaseError

        if not isinstance(exc, DatabaseError):
            raise
        # A write the database refused (a read-only file, a full disk) ended in a traceback.
        _say(f"the index database refused: {exc} (what was committed is kept)")
        return 1


def _say(message) -> None:
    """The one line an error or an interruption ends a command with, on a line of its own."""
    end_line()
    print(f"arcology-oracle: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
