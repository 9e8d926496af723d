"""Settings: one frozen, validated object built from defaults, a TOML file, the
environment and command-line flags, in that order of precedence (later wins).

Loading has no side effects beyond reading the config file. Every environment variable
is ``ARCOLOGY_ORACLE_<FIELD>`` (e.g. ``ARCOLOGY_ORACLE_ROAM_DIR``); ``ARCOLOGY_ORACLE_DB``
is the short name of ``db_path`` and ``OLLAMA_HOST`` is honoured for ``ollama_host``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError
from .org_tags import is_tag_char

DEFAULT_PORT = 7348
ENV_PREFIX = "ARCOLOGY_ORACLE_"

# Task prefixes of well-known embedding models; any model can be configured in
# ``embed_prefixes``. Models not listed get none (all-minilm must not get any).
KNOWN_PREFIXES: dict[str, dict[str, str]] = {
    "nomic-embed-text": {"document": "search_document: ", "query": "search_query: "},
    "mxbai-embed-large": {
        "document": "",
        "query": "Represent this sentence for searching relevant passages: ",
    },
    "snowflake-arctic-embed": {
        "document": "",
        "query": "Represent this sentence for searching relevant passages: ",
    },
}


# A Host header value (RFC 9110: uri-host [":" port]), or an entry of ``allowed_hosts``.
_HOST_RE = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::(?P<port>[0-9]{1,5}))?")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host header value such as ``Box.ts.net.:443`` or ``[::1]``:
    the name lowercased, without brackets or a trailing dot. None when malformed."""
    match = _HOST_RE.fullmatch(value.strip())
    if match is None:
        return None
    name = (match["v6"] or match["name"]).lower().rstrip(".")
    return (name, int(match["port"]) if match["port"] else None) if name else None


def xdg_dir(kind: str, fallback: str) -> Path:
    """``$XDG_<KIND>_HOME/arcology-oracle`` or ``~/<fallback>/arcology-oracle``."""
    base = os.environ.get(f"XDG_{kind}_HOME") or str(Path.home() / fallback)
    return Path(base) / "arcology-oracle"


def default_config_file() -> Path:
    return xdg_dir("CONFIG", ".config") / "config.toml"


def default_db_path() -> Path:
    return xdg_dir("DATA", ".local/share") / "index.sqlite3"


class Prefixes(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    document: str = ""
    query: str = ""


class Settings(BaseModel):
    """Every setting of the daemon and the CLI. Paths are absolute after loading."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roam_dir: Path = Field(default_factory=lambda: Path.home() / "org-roam")
    db_path: Path = Field(default_factory=default_db_path)
    host: str = "127.0.0.1"
    port: int = Field(DEFAULT_PORT, ge=0, le=65535)
    token: str | None = None
    # Host names (besides loopback and ``host``) the daemon answers to; see http/guard.py.
    allowed_hosts: tuple[str, ...] = ()

    ollama_host: str = "http://127.0.0.1:11434"
    embed_model: str = "nomic-embed-text"
    embed_prefixes: dict[str, Prefixes] = Field(default_factory=dict)
    chat_model: str = "llama3.2"
    embed_batch_size: int = Field(32, ge=1, le=1024)
    embed_timeout: float = Field(60.0, gt=0)
    chat_timeout: float = Field(300.0, gt=0)
    connect_timeout: float = Field(5.0, gt=0)
    # How long /search waits for its query's embedding before answering by keywords alone
    # (answers/search.py): a busy or slow Ollama must not make a phone's search time out.
    search_embed_wait: float = Field(8.0, gt=0)
    retry_max_seconds: float = Field(60.0, gt=0)

    private_tags: tuple[str, ...] = ("private",)
    exclude_globs: tuple[str, ...] = ()
    chunk_chars: int = Field(2000, ge=200)
    chunk_overlap: int = Field(200, ge=0)
    debounce_seconds: float = Field(0.3, ge=0)
    # Processes that parse org files during a large reconcile; None: 1, or 0 on a single core.
    parse_workers: int | None = Field(None, ge=0, le=64)

    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    context_chars: int = Field(12000, ge=500)
    min_vector_similarity: float = Field(0.35, ge=-1, le=1)
    # The relevance gate of /ask in keyword mode: the share of the question's words a heading must hold.
    min_keyword_coverage: float = Field(0.5, ge=0, le=1)
    # Vector hits below this cosine are left out of /search (see answers.search_ranking.search).
    min_search_similarity: float = Field(0.25, ge=-1, le=1)
    recency_half_life_days: float | None = Field(None, gt=0)
    prompts_file: Path | None = None
    sources_in_compat_answers: bool = True
    # The graph signal of /similar and /suggest-links (answers/graph.py): shared links,
    # refs and tags fused with the text score, and the graph's weight in that fusion.
    # On by default: it beat text alone by >= 10% on every corpus (BENCHMARKS.md).
    graph_similarity: bool = True
    graph_weight: float = Field(1.0, ge=0, le=10)
    # The relevance cut-off of /similar and /suggest-links: results scoring below it (the
    # calibrated chance that a note at that score is one the user linked, see
    # answers/relevance.py) are left out unless the request asks all=true. Measured on
    # real notes (BENCHMARKS.md, "Relevance a person can read").
    min_score: float = Field(0.03, ge=0, le=1)
    # Answers written into notes (/converse) cite their sources as [[id:]] links, as before
    # (org-roam then lists the conversation among every cited note's backlinks); off: a
    # :SOURCES: property of IDs and a plain list, which org-roam does not collect.
    answer_source_links: bool = False

    # Memory (POST /memorize): org-roam-dailies' defaults, relative to roam_dir.
    dailies_dir: str = "daily"
    daily_file_format: str = "%Y-%m-%d.org"
    capture_inbox: str = "inbox.org"
    # Read the time a question names ("last week") and answer from headings dated then.
    parse_dates: bool = True
    # The oracle's own earlier answers (headings with :ROLE: oracle) as sources for /ask,
    # /converse and the grounded models: off, so it never cites its past guesses as notes.
    oracle_answers_as_evidence: bool = False
    # Dialogue (answers/windows.py): the speakers the user is, whose turns a question in
    # the first person weighs, and how many turns either side of a match a window shows.
    user_speakers: tuple[str, ...] = ("Me", "I", "user", "human")
    evidence_neighbours: int = Field(2, ge=0, le=10)
    # MCP (see mcp_server/): where `arcology-oracle mcp` finds the daemon (default
    # http://host:port), the port `serve` also answers MCP's streamable HTTP on (None: off),
    # and whether tools that write notes (remember) are offered at all.
    daemon_url: str | None = None
    mcp_port: int | None = Field(None, ge=0, le=65535)
    mcp_allow_writes: bool = False

    @field_validator("ollama_host")
    @classmethod
    def _normalise_host(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value:
            raise ValueError("must not be empty")
        if "://" not in value:
            value = "http://" + value
        return value

    @field_validator("private_tags")
    @classmethod
    def _org_tags(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        """Each tag as Org writes it between colons (``:private:`` and ``private`` are the
        same tag; ``private:therapy`` is two). A value no heading can carry is refused: it
        would keep nothing private."""
        tags = []
        for value in values:
            for tag in value.strip().strip(":").split(":"):
                if not tag or not all(is_tag_char(c) for c in tag):
                    raise ValueError(
                        f"{value!r} is not an Org tag (letters, digits, _, @, # and %, such as private): "
                        "no heading could carry it, so it would keep nothing private"
                    )
                tags.append(tag)
        return tuple(tags)

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        names = []
        for value in values:
            bare_ipv6 = value.count(":") > 1 and not value.startswith("[")
            parsed = split_host(f"[{value}]" if bare_ipv6 else value)
            if parsed is None:
                raise ValueError(f"{value!r} is not a host name (such as mybox.tailnet-name.ts.net, without scheme or path)")
            names.append(parsed[0])
        return tuple(names)

    @field_validator("daemon_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        return value if "://" in value else "http://" + value

    @field_validator("roam_dir", "db_path", "prompts_file")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return None if value is None else value.expanduser().absolute()

    @field_validator("dailies_dir", "daily_file_format", "capture_inbox")
    @classmethod
    def _relative(cls, value: str) -> str:
        parts = Path(value).parts
        if not value.strip() or Path(value).is_absolute() or ".." in parts:
            raise ValueError("must be a path relative to roam_dir, without '..'")
        return value

    @field_validator("token")
    @classmethod
    def _token(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if value and not all("\x21" <= c <= "\x7e" for c in value):
            # A browser cannot send anything else in a header: the web page could never log in.
            raise ValueError("must be printable ASCII without spaces (letters, digits, punctuation)")
        return value or None

    def prefixes_for(self, model: str) -> Prefixes:
        """The task prefixes for ``model``: configured, else known, else none."""
        base = model.split(":", 1)[0]
        for key in (model, base):
            if key in self.embed_prefixes:
                return self.embed_prefixes[key]
        for key in (model, base):
            if key in KNOWN_PREFIXES:
                return Prefixes(**KNOWN_PREFIXES[key])
        return Prefixes()

    @property
    def is_loopback(self) -> bool:
        """Whether ``host`` only accepts connections from this machine."""
        if self.host in ("localhost", "ip6-localhost"):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def public_dict(self) -> dict[str, Any]:
        """The settings as JSON-able data, with the token masked."""
        data = json.loads(self.model_dump_json())
        if data.get("token"):
            data["token"] = "***"
        return data


_ENV_ALIASES = {"db_path": ("ARCOLOGY_ORACLE_DB",), "ollama_host": ("OLLAMA_HOST",)}
_LIST_FIELDS = {"private_tags", "exclude_globs", "allowed_hosts"}


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in Settings.model_fields:
        # The specific name wins over the generic alias (OLLAMA_HOST).
        names = [ENV_PREFIX + name.upper(), *_ENV_ALIASES.get(name, ())]
        for env_name in names:
            if environ.get(env_name):
                value: Any = environ[env_name]
                if name in _LIST_FIELDS:
                    value = _env_list(value)
                elif name == "embed_prefixes":
                    try:
                        value = json.loads(value)
                    except json.JSONDecodeError as exc:
                        raise ConfigError(f"{env_name}: not valid JSON: {exc}") from None
                found[name] = value
                break
    return found


def _env_list(value: str) -> list[str]:
    """A list setting from the environment: comma-separated (``a, b``), or a JSON list of
    strings as the TOML file writes it (``["a", "b"]``), which comma-splitting would turn
    into the items ``["a"`` and ``"b"]``."""
    if value.lstrip().startswith("["):
        try:
            items = json.loads(value)
        except json.JSONDecodeError:
            items = None  # a glob such as [ab]*.org
        if isinstance(items, list) and all(isinstance(item, str) for item in items):
            return [item.strip() for item in items if item.strip()]
    return [part.strip() for part in value.split(",") if part.strip()]


def read_config_file(path: Path) -> dict[str, Any]:
    """The TOML file's settings (keys as in :class:`Settings`). Raises ConfigError."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # (tomllib's, of bytes that are not UTF-8: it was a traceback)
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None
    data = {key.replace("-", "_"): value for key, value in data.items()}
    if "db" in data and "db_path" not in data:
        data["db_path"] = data.pop("db")
    return data


def load_settings(
    *,
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build :class:`Settings` from defaults < TOML file < environment < ``overrides``.

    ``config_file`` None means the default path, used only if it exists; a file named
    explicitly (argument or ``ARCOLOGY_ORACLE_CONFIG``) must exist. ``overrides`` are the
    command-line flags; None values in it are ignored. Raises :class:`ConfigError` with
    one line per invalid setting.
    """
    environ = os.environ if environ is None else environ
    explicit = config_file or (Path(environ["ARCOLOGY_ORACLE_CONFIG"]) if environ.get("ARCOLOGY_ORACLE_CONFIG") else None)
    values: dict[str, Any] = {}
    source = "defaults"
    if explicit is not None:
        values.update(read_config_file(Path(explicit).expanduser()))
        source = str(explicit)
    elif default_config_file().is_file():
        values.update(read_config_file(default_config_file()))
        source = str(default_config_file())
    values.update(_from_env(environ))
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown setting"
            lines.append(f"  {where}: {msg}")
        raise ConfigError(f"invalid configuration (from {source}, environment and flags):\n" + "\n".join(lines)) from None
