"""OpenAI's API shapes translated to Ollama's and back: chat requests, completions and
streamed chunks, model lists, embeddings. Pure functions of JSON values, no HTTP; the
translations follow the shapes Ollama's own OpenAI layer uses.
"""

from __future__ import annotations

import base64
import json
import secrets
import struct
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...answers.grounding import entry_name
from ...errors import BadRequest


# --------------------------------------------------------------------------- OpenAI -> Ollama

_SAME_OPTIONS = ("temperature", "top_p", "seed", "frequency_penalty", "presence_penalty")


def openai_chat_to_ollama(body: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI chat-completions request as an Ollama ``/api/chat`` body.

    Sampling fields become ``options`` (``max_tokens``/``max_completion_tokens`` ->
    ``num_predict``, ``stop`` -> a list); ``response_format`` becomes ``format``;
    ``reasoning_effort`` becomes ``think`` (:func:`think_value`); ``tools`` pass
    unchanged. Ollama's own ``options``, ``keep_alive`` and ``think`` are honoured too.
    Raises BadRequest for malformed messages and an unknown reasoning effort.
    """
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise BadRequest("messages must be a non-empty list")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise BadRequest("stream must be true or false")
    out: dict[str, Any] = {
        "model": body.get("model"),
        "messages": openai_messages_to_ollama(raw_messages),
        "stream": bool(stream),
    }
    options: dict[str, Any] = dict(body["options"]) if isinstance(body.get("options"), dict) else {}
    for key in _SAME_OPTIONS:
        if body.get(key) is not None:
            options[key] = body[key]
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None:
        options["num_predict"] = limit
    stop = body.get("stop")
    if stop is not None:
        options["stop"] = [stop] if isinstance(stop, str) else stop
    if options:
        out["options"] = options
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        if fmt.get("type") == "json_object":
            out["format"] = "json"
        elif fmt.get("type") == "json_schema":
            wrapper = fmt.get("json_schema")
            schema = wrapper.get("schema") if isinstance(wrapper, dict) else None
            if not isinstance(schema, dict):
                raise BadRequest("response_format.json_schema.schema must be an object")
            out["format"] = schema
    for key in ("tools", "keep_alive"):
        if body.get(key) is not None:
            out[key] = body[key]
    think = think_value(body)
    if think is not None:
        out["think"] = think
    return out


_EFFORTS = ("high", "medium", "low", "none")


def think_value(body: Mapping[str, Any]) -> Any:
    """Ollama's ``think`` for an OpenAI request (None: leave it out): Ollama's own
    ``think`` as given, else ``reasoning.effort`` or ``reasoning_effort`` as Ollama's
    OpenAI layer reads them: "none" turns thinking off (False), "low", "medium" and
    "high" pass as levels, anything else is a BadRequest."""
    if body.get("think") is not None:
        return body["think"]
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else body.get("reasoning_effort")
    if effort is None or effort == "":
        return None
    if effort not in _EFFORTS:
        raise BadRequest(f'invalid reasoning value: {effort!r} (must be "high", "medium", "low", or "none")')
    return False if effort == "none" else effort


def openai_messages_to_ollama(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """OpenAI messages (text or content parts, data-URL images, tool calls) in Ollama's shape."""
    tool_names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"messages[{i}] must be an object with a role")
        role = "system" if message["role"] == "developer" else message["role"]
        text, images = _content_parts(message.get("content"), i)
        converted: dict[str, Any] = {"role": role, "content": text}
        if images:
            converted["images"] = images
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            converted["tool_calls"] = []
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(call.get("id", ""), (str, type(None))):
                    raise BadRequest(f"messages[{i}]: each tool call must be an object with a function object and a string id")
                arguments = function.get("arguments") or "{}"
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except json.JSONDecodeError:
                        raise BadRequest(f"messages[{i}]: tool call arguments are not JSON") from None
                converted["tool_calls"].append({"function": {"name": function.get("name"), "arguments": arguments}})
                if call.get("id"):
                    tool_names[call["id"]] = function.get("name")
        call_id = message.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise BadRequest(f"messages[{i}]: tool_call_id must be a string")
        if role == "tool":  # the tool's name as the message gives it, else by its call's ID
            name = message.get("name")
            name = name if isinstance(name, str) and name else tool_names.get(call_id)
            if name:
                converted["tool_name"] = name
        out.append(converted)
    return out


def _content_parts(content: Any, i: int) -> tuple[str, list[str]]:
    if content is None or isinstance(content, str):
        return content or "", []
    if not isinstance(content, list):
        raise BadRequest(f"messages[{i}].content must be a string or a list of parts")
    texts: list[str] = []
    images: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
                raise BadRequest(f"messages[{i}]: images must be base64 data: URLs")
            images.append(url.split(";base64,", 1)[1])
        else:
            raise BadRequest(f"messages[{i}]: unsupported content part {kind!r}")
    return "\n".join(texts), images


def openai_embeddings_to_ollama(body: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI embeddings request as an Ollama ``/api/embed`` body (text input only)."""
    value = body.get("input")
    if isinstance(value, str):
        inputs: str | list[str] = value
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        inputs = list(value)
    else:
        raise BadRequest("input must be a string or a non-empty list of strings (token arrays are not supported)")
    out: dict[str, Any] = {"model": body.get("model"), "input": inputs}
    if body.get("dimensions") is not None:
        out["dimensions"] = body["dimensions"]
    for key in ("options", "keep_alive", "truncate"):
        if body.get(key) is not None:
            out[key] = body[key]
    return out


# --------------------------------------------------------------------------- Ollama -> OpenAI


def finish_reason(done_reason: Any, tool_calls: bool) -> str:
    if tool_calls:
        return "tool_calls"
    return "length" if done_reason == "length" else "stop"


def usage(frame: Mapping[str, Any]) -> dict[str, int]:
    prompt = int(frame.get("prompt_eval_count") or 0)
    completion = int(frame.get("eval_count") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def openai_tool_calls(calls: Any, start: int = 0) -> list[dict[str, Any]]:
    """Ollama tool calls (arguments as objects) in OpenAI's shape (arguments as JSON text)."""
    out = []
    for n, call in enumerate(calls if isinstance(calls, list) else [], start):
        function = (call or {}).get("function") or {}
        arguments = function.get("arguments", {})
        out.append({
            "index": n,
            "id": call.get("id") or f"call_{secrets.token_hex(8)}",
            "type": "function",
            "function": {
                "name": function.get("name"),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        })  # fmt: skip
    return out


def new_completion_id() -> str:
    return "chatcmpl-" + secrets.token_hex(12)


def openai_completion(frame: Mapping[str, Any], *, model: str) -> dict[str, Any]:
    """A non-streaming Ollama chat answer as an OpenAI ``chat.completion``."""
    message = frame.get("message") or {}
    out_message: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("thinking"):
        out_message["reasoning"] = message["thinking"]
    calls = openai_tool_calls(message.get("tool_calls"))
    if calls:
        out_message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
    return {
        "id": new_completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": out_message, "finish_reason": finish_reason(frame.get("done_reason"), bool(calls))}],
        "usage": usage(frame),
    }  # fmt: skip


class ChunkTranslator:
    """Turns the frames of one streaming Ollama chat into OpenAI ``chat.completion.chunk``s."""

    def __init__(self, model: str, *, include_usage: bool = False):
        self.model = model
        self.include_usage = include_usage
        self.id = new_completion_id()
        self.created = int(time.time())
        self._tool_calls = 0

    def _chunk(self, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }  # fmt: skip

    def translate(self, frame: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The chunks for one Ollama frame (the last frame also yields the finish chunk
        and, if asked for, a usage chunk)."""
        message = frame.get("message") or {}
        chunks = []
        delta: dict[str, Any] = {}
        if message.get("content"):
            delta["content"] = message["content"]
        if message.get("thinking"):
            delta["reasoning"] = message["thinking"]
        calls = openai_tool_calls(message.get("tool_calls"), self._tool_calls)
        if calls:
            delta["tool_calls"] = calls
            self._tool_calls += len(calls)
        if delta:
            chunks.append(self._chunk({"role": "assistant", **delta}, None))
        if frame.get("done"):
            chunks.append(self._chunk({}, finish_reason(frame.get("done_reason"), self._tool_calls > 0)))
            if self.include_usage:
                chunks.append({**self._chunk({}, None), "choices": [], "usage": usage(frame)})
        return chunks


def openai_models(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``/api/tags`` entries (grounded variants included) as OpenAI's model list."""
    return {"object": "list", "data": [openai_model(e) for e in entries]}


def openai_model(entry: Mapping[str, Any]) -> dict[str, Any]:
    name = entry_name(entry)
    owner = name.rsplit("/", 1)[0] if "/" in name else "library"
    return {"id": name, "object": "model", "created": _unix(entry.get("modified_at")), "owned_by": owner}


def _unix(stamp: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(stamp)).timestamp())
    except ValueError:
        return 0


def openai_embeddings(answer: Mapping[str, Any], *, model: str, encoding_format: str | None) -> dict[str, Any]:
    """An Ollama ``/api/embed`` answer as OpenAI's embeddings list (floats, or base64 of
    little-endian float32 when ``encoding_format`` is ``"base64"``)."""
    vectors = answer.get("embeddings")
    if not isinstance(vectors, list):
        raise ValueError("the answer has no embeddings")
    data = []
    for i, vector in enumerate(vectors):
        value: Any = vector
        if encoding_format == "base64":
            value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "embedding": value, "index": i})
    tokens = int(answer.get("prompt_eval_count") or 0)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
