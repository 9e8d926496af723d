"""The web page: ``GET /`` and its assets under ``/static/``.

The page is a few static files shipped as package data (``arcology_oracle/web/``), read
once when the app is built and served from memory. They carry no note text, so the auth
middleware lets them through without a token; the page's script asks for the token on the
first 401, keeps it in the browser's local storage and sends it as
``Authorization: Bearer`` with every API call (never in a URL).

Every response carries a strict Content-Security-Policy: script, style and images only
from this origin, no inline script or style, network calls only to this origin, no
frames, no form submission. Note text reaches the page only as JSON from the API and is
inserted as text, so a note holding ``<script>`` shows as text; the policy is the second
line of defence.

Caching: ``index.html`` is revalidated on every load (``no-cache`` with an ETag). It refers
to each asset as ``/static/NAME?v=HASH`` (HASH of the asset's bytes), and such a URL is
cached for a year, since its content can never change; a new daemon version brings new
hashes, hence new URLs.
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
from dataclasses import dataclass
from importlib import resources

from aiohttp import web

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}
REVALIDATE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_ASSET_REF_RE = re.compile(r'(?P<attr>(?:src|href))="/static/(?P<name>[\w.-]+)"')


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    version: str  # first 16 hex digits of the body's SHA-256

    @property
    def etag(self) -> str:
        return f'"{self.version}"'


@dataclass(frozen=True)
class WebAssets:
    page: Asset
    static: dict[str, Asset]


assets_key = web.AppKey("web_assets", WebAssets)


def _asset(name: str, body: bytes) -> Asset:
    suffix = "." + name.rpartition(".")[2]
    content_type = _CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Asset(body, content_type, hashlib.sha256(body).hexdigest()[:16])


def load_assets() -> WebAssets:
    """Read the page and its assets from the package; point the page at versioned asset URLs.

    Raises LookupError when the page itself is missing (a broken install).
    """
    folder = resources.files("arcology_oracle").joinpath("web")
    static = {
        entry.name: _asset(entry.name, entry.read_bytes())
        for entry in folder.iterdir()
        if entry.is_file() and entry.name != "index.html" and not entry.name.startswith(".")
    }
    page_file = folder.joinpath("index.html")
    if not page_file.is_file():
        raise LookupError("arcology_oracle/web/index.html is missing from the installed package")

    def versioned(match: re.Match) -> str:
        name = match["name"]
        if name not in static:
            raise LookupError(f"index.html refers to /static/{name}, which is not shipped")
        return f'{match["attr"]}="/static/{name}?v={static[name].version}"'

    html = _ASSET_REF_RE.sub(versioned, page_file.read_text("utf-8"))
    return WebAssets(page=_asset("index.html", html.encode("utf-8")), static=static)


def _respond(request: web.Request, asset: Asset, cache_control: str) -> web.Response:
    headers = {**SECURITY_HEADERS, "Cache-Control": cache_control, "ETag": asset.etag}
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, headers={**headers, "Content-Type": asset.content_type})


async def page(request: web.Request) -> web.Response:
    return _respond(request, request.app[assets_key].page, REVALIDATE)


async def static(request: web.Request) -> web.Response:
    asset = request.app[assets_key].static.get(request.match_info["name"])
    if asset is None:
        raise web.HTTPNotFound(text="no such file")
    # Only the URL the page refers to may be cached for good; any other ?v= is revalidated.
    cache_control = IMMUTABLE if request.query.get("v") == asset.version else REVALIDATE
    return _respond(request, asset, cache_control)


def setup(app: web.Application) -> None:
    """Load the page's files and add ``GET /`` and ``GET /static/{name}`` (HEAD included)."""
    app[assets_key] = load_assets()
    app.router.add_get("/", page)
    app.router.add_get(r"/static/{name:[\w.-]+}", static)
