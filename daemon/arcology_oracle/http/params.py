"""Reading and validating request parameters; every failure is a BadRequest (400).

The native routes validate with the request models of :mod:`.schemas`
(:func:`parse_query`, :func:`parse_body`); the compatible APIs, which pass bodies on to
Ollama, read what they need with :func:`json_body` and :func:`str_param`.

JSON bodies are held to plain JSON: ``NaN`` and ``Infinity`` are refused, and so is
nesting deeper than :data:`MAX_JSON_DEPTH` (no request needs it, and a deep enough one
would exhaust the parser's or a later encoder's recursion).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from ..errors import BadRequest

M = TypeVar("M", bound=BaseModel)


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


def validated(model: type[M], data: Any) -> M:
    """``data`` as a ``model``; BadRequest naming the first bad field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"])
        message = "is required" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
        if first["type"] == "too_long" and isinstance(first.get("input"), str):
            # A text checked by a validator too: pydantic says "Value should have at
            # most 200000 items after validation", which reads as no text's limit.
            message = f"is too long: {first['ctx']['actual_length']} characters, at most {first['ctx']['max_length']}"
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise BadRequest(f"{where}: {message}{more}" if where else message + more) from None


def parse_query(request: web.Request, model: type[M]) -> M:
    """The query string as a ``model``; an empty value (``k=``) counts as absent."""
    return validated(model, {key: value for key, value in request.query.items() if value != ""})


async def parse_body(request: web.Request, model: type[M]) -> M:
    """The JSON object body as a ``model`` (see :func:`json_body`)."""
    return validated(model, await json_body(request))
