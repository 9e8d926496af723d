"""The one place that builds ``ollama.AsyncClient`` and turns its failures into ours.

The ollama client has no timeout by default, raises ``ResponseError`` for HTTP errors,
``ConnectionError`` for a refused connection, and raw ``httpx`` errors when streaming or on
timeouts; a body that is not JSON surfaces as a ``ValueError``. :func:`translate_errors`
maps all of these to :class:`~arcology_oracle.errors.ServiceUnavailable` (or
:class:`~arcology_oracle.errors.ModelNotFound`), naming the host and model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import ollama

from ..errors import ModelNotFound, ServiceUnavailable


def make_client(host: str, *, timeout: float, connect_timeout: float) -> ollama.AsyncClient:
    """An AsyncClient for ``host`` with explicit read and connect timeouts."""
    return ollama.AsyncClient(host=host, timeout=httpx.Timeout(timeout, connect=connect_timeout))


class OllamaConnection:
    """Owns one lazily created AsyncClient for ``host``; ``close()`` releases its
    connections and a later call creates a fresh client."""

    def __init__(self, host: str, *, timeout: float, connect_timeout: float):
        self.host = host
        self._timeouts = (timeout, connect_timeout)
        self._client: ollama.AsyncClient | None = None

    @property
    def client(self) -> ollama.AsyncClient:
        if self._client is None:
            timeout, connect = self._timeouts
            self._client = make_client(self.host, timeout=timeout, connect_timeout=connect)
        return self._client

    async def close(self) -> None:
        """Close the HTTP connections to Ollama (idempotent)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


@contextmanager
def translate_errors(host: str, model: str | None) -> Iterator[None]:
    """Re-raise Ollama client failures inside the block as ServiceUnavailable."""
    what = f"model {model!r} at {host}" if model else host
    try:
        yield
    except ollama.ResponseError as exc:
        message = str(exc.error)
        if exc.status_code == 404 or "not found" in message.lower():
            raise ModelNotFound(
                f"Ollama at {host} has no model {model!r} ({message}); try `ollama pull {model}`",
                host=host,
                model=model,
            ) from None
        raise ServiceUnavailable(
            f"Ollama error from {what} (HTTP {exc.status_code}): {message}", host=host, model=model
        ) from None
    except (ConnectionError, httpx.ConnectError) as exc:
        raise ServiceUnavailable(f"cannot connect to Ollama at {host}: {exc}", host=host, model=model) from None
    except httpx.TimeoutException:
        raise ServiceUnavailable(f"Ollama at {host} timed out ({what})", host=host, model=model) from None
    except httpx.HTTPError as exc:
        raise ServiceUnavailable(f"HTTP error talking to Ollama at {host}: {exc}", host=host, model=model) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ServiceUnavailable(f"invalid response from {what}: {exc}", host=host, model=model) from None
