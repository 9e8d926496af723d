"""Domain exceptions. The http and cli layers translate them into responses and exit codes."""


class OracleError(Exception):
    """Base class for errors this package raises on purpose."""


class ConfigError(OracleError):
    """The configuration is invalid; the message says which setting and why."""


class NotFound(OracleError):
    """A node, heading or file asked for is not in the index."""


class BadRequest(OracleError):
    """The caller's input is invalid; the message says how."""


class Conflict(OracleError):
    """The request cannot be done in the current state (a note the user owns or is editing).

    ``retry`` (the 409's ``retry``) is whether the same request, sent again unchanged in a
    moment, can succeed with nothing changed by hand: True when what refused it passes
    (another program has the note open or leased, Emacs holds it with unsaved edits
    until they are saved, a program renamed a new file over it meanwhile; an interrupted forget the daemon finishes; the daemon
    restarted on other notes); False when it never will (the user's own heading, a
    capture edited or copied, the line above it changed, a read-only or non-UTF-8 note,
    a full disk, a failed write). Every raise says which: there is no default."""

    def __init__(self, message: str, *, retry: bool):
        super().__init__(message)
        self.retry = retry


class StoreError(OracleError):
    """The database cannot be used (corrupt, locked, wrong schema)."""


class DimensionMismatch(StoreError):
    """A vector's length differs from the dimension recorded for the embedding model."""


class ServiceUnavailable(OracleError):
    """Ollama (embedder or chat model) cannot be reached or refused the request."""

    def __init__(self, message: str, *, host: str | None = None, model: str | None = None):
        super().__init__(message)
        self.host = host
        self.model = model


class Stopping(ServiceUnavailable):
    """The daemon is stopping (SIGTERM, ``C-c``): an answer under way was ended."""


class ModelNotFound(ServiceUnavailable):
    """Ollama answered that the model is not installed."""
