"""Reading and validating request parameters; every failure is a BadRequest (400).

JSON bodies are held to plain JSON: ``NaN`` and ``Infinity`` are refused, and so is
nesting deeper than :data:`MAX_JSON_DEPTH` (no request needs it, and a deep enough one
would exhaust the parser's or a later encoder's recursion).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..errors import BadRequest


def int_param(value: Any, name: str, *, default: int, low: int = 1, high: int = 100) -> int:
    """``value`` as an int in ``[low, high]``; ``default`` when None or empty."""
    if value is None or value == "":
        return default
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise BadRequest(f"{name} must be an integer, not {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadRequest(f"{name} must be an integer, not {str(value)[:40]!r}") from None
    if not low <= number <= high:
        raise BadRequest(f"{name} must be between {low} and {high}")
    return number


def bool_param(value: Any, name: str, *, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise BadRequest(f"{name} must be true or false")


def str_param(value: Any, name: str, *, required: bool = False, max_len: int = 1_000_000) -> str | None:
    if value is None:
        if required:
            raise BadRequest(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string")
    if required and not value.strip():
        raise BadRequest(f"{name} must not be empty")
    if len(value) > max_len:
        raise BadRequest(f"{name} is too long (at most {max_len} characters)")
    return value


MAX_JSON_DEPTH = 64


def _refuse_constant(name: str) -> Any:
    raise BadRequest(f"invalid JSON body: {name} is not a JSON number")


def _check_depth(value: Any, raw: bytes) -> None:
    """BadRequest when ``value`` nests deeper than MAX_JSON_DEPTH (``raw``: its text)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return  # cannot be that deep: skip the walk
    level: list[Any] = [value]
    for _ in range(MAX_JSON_DEPTH):
        level = [v for c in level for v in (c.values() if isinstance(c, dict) else c) if isinstance(v, (dict, list))]
        if not level:
            return
    raise BadRequest(f"the JSON body is nested too deep (at most {MAX_JSON_DEPTH} levels)")


def parse_json(raw: bytes) -> Any:
    """``raw`` parsed as plain JSON (see the module docstring); BadRequest otherwise."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON body: {exc}") from None
    except RecursionError:
        raise BadRequest(f"the JSON body is nested too deep (at most {MAX_JSON_DEPTH} levels)") from None
    _check_depth(value, raw)
    return value


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object body. 400 for invalid JSON or a non-object;
    413 (raised by aiohttp) past the configured body size."""
    raw = await request.read()
    if not raw:
        raise BadRequest("a JSON body is required")
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise BadRequest("the JSON body must be an object")
    return body


def rel_path_param(value: Any, name: str = "file") -> str:
    """A path relative to the roam dir; absolute paths and ``..`` parts are refused."""
    path = str_param(value, name, required=True, max_len=4096)
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "~")) or ".." in parts or "\x00" in path:
        raise BadRequest(f"{name} must be a path relative to the roam directory, without '..'")
    return "/".join(p for p in parts if p not in ("", "."))
