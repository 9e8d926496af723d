"""Which daemon answers: a client holding what another daemon said is told so.

Every response carries ``X-Arcology-Oracle-Instance``, the ``instance`` of ``/status``
(new at each start): a client sees a restart and reads ``/status`` again. A request may
carry back, percent-encoded, the ``roam_dir`` its client read there
(``X-Arcology-Oracle-Notes``; the Emacs client sends it): its file paths are relative to
those notes. A daemon serving other notes (restarted quickly on another roam directory,
on the same port) refuses it with a 409 before any route runs, reading and writing
nothing; the client reads ``/status`` again and asks again. ``/status`` and ``/health``
take nothing a client was told and are never refused.
"""

from __future__ import annotations

from urllib.parse import unquote

from aiohttp import web

from ..errors import Conflict
from .keys import index_key, settings_key

INSTANCE = "X-Arcology-Oracle-Instance"
NOTES = "X-Arcology-Oracle-Notes"
_STATELESS = frozenset({"/status", "/health"})


@web.middleware
async def notes_middleware(request: web.Request, handler):
    said = request.headers.get(NOTES)
    roam_dir = str(request.app[settings_key].roam_dir)
    if said is not None and unquote(said) != roam_dir and request.path not in _STATELESS:
        raise Conflict(
            f"the daemon was restarted since this client read its /status: it serves the notes in "
            f"{roam_dir} now; nothing was done, ask again",
            retry=True,
        )
    return await handler(request)


async def add_instance_header(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: name this daemon process on every response."""
    if (now := getattr(request.app.get(index_key), "instance", None)) is not None:
        response.headers[INSTANCE] = now
