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
    """The request cannot be done in the current state (a note the user owns or is editing)."""


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
