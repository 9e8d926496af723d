"""Reading and validating request parameters; every failure is a BadRequest (400)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..errors import BadRequest


def int_param(value: Any, name: str, *, default: int, low: int = 1, high: int = 100) -> int:
    """``value`` as an int in ``[low, high]``; ``default`` when None or empty."""
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise BadRequest(f"{name} must be an integer")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{name} must be an integer, not {value!r}") from None
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


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object body. 400 for invalid JSON or a non-object;
    413 (raised by aiohttp) past the configured body size."""
    raw = await request.read()
    if not raw:
        raise BadRequest("a JSON body is required")
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON body: {exc}") from None
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
