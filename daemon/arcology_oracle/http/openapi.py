"""``GET /openapi.json``: an OpenAPI 3.1 description of every route, built from the
pydantic models of :mod:`.schemas` (never written by hand), behind the token like the
rest of the API.

:data:`OPERATIONS` lists each route once: its query model (whose fields become query
parameters), body model and answer model. The compatible APIs (``/api/*``, ``/v1/*``)
are described by what the daemon itself reads; their bodies pass on to Ollama as sent.
``tests/http/test_openapi.py`` checks that every registered route is described here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .. import __version__
from . import ask_schemas as ask_s
from . import links_schemas as ls
from . import memory_schemas as memory_s
from . import schemas as s
from .compat import schemas as compat_s

JSON = "application/json"
NDJSON = "application/x-ndjson"
REF = "#/components/schemas/{model}"


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    summary: str
    tag: str = "native"
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None
    # Other content types of a 200 answer (a stream, text, the page).
    other: tuple[str, ...] = ()
    public: bool = False


ERRORS = {"native": s.Error, "ollama": compat_s.OllamaError, "openai": compat_s.OpenAIError}

OPERATIONS = (
    Operation("get", "/health", "Liveness (no token needed)", answer=s.Health, public=True),
    Operation("get", "/status", "What is indexed, the embedder's state, indexing progress", answer=s.Status),
    Operation("get", "/search", "Hybrid (vector + keyword) search of headings", query=s.SearchQuery, answer=s.Hits),
    Operation("get", "/similar", "Notes similar to a node or to the heading at a line", query=s.SimilarQuery, answer=s.Hits),
    Operation("post", "/similar", "Notes similar to a text", body=s.SimilarText, answer=s.Hits),
    Operation("get", "/journal", "Headings of daily notes dated in a range, oldest first", query=s.JournalQuery,
              answer=s.Journal),  # fmt: skip
    Operation("get", "/nodes/{node_id}", "A node: title, file, tags, aliases, its headings", answer=s.Node),
    Operation("get", "/heading", "The raw text of the heading at a line", query=s.HeadingQuery, answer=s.Heading),
    Operation("get", "/suggest-links", "Related notes a note does not link to yet, and where each link belongs",
              query=ls.SuggestLinksQuery, answer=ls.LinkSuggestions),  # fmt: skip
    Operation("post", "/suggest-links/reject", "Never suggest this link again", body=ls.RejectLink, answer=ls.Rejected),
    Operation("get", "/suggest-links/rejections", "The rejected link suggestions", query=ls.RejectionsQuery,
              answer=ls.Rejections),  # fmt: skip
    Operation("delete", "/suggest-links/rejections", "Forget rejected link suggestions", query=ls.RejectionsQuery,
              answer=ls.Cleared),  # fmt: skip
    Operation("post", "/ask", "Answer a question from the notes (JSON, or NDJSON events)", body=ask_s.AskRequest,
              answer=ask_s.AskAnswer, other=(NDJSON,)),  # fmt: skip
    Operation("get", "/ask", "Answer a question as streamed plain text, then its sources", query=ask_s.AskQuery,
              other=("text/plain",)),  # fmt: skip
    Operation("post", "/summarize", "A note's summary, or the notes matching a question", body=ask_s.SummarizeRequest,
              answer=ask_s.Summary, other=(NDJSON,)),  # fmt: skip
    Operation("post", "/converse", "Continue an org conversation; the answer as an org heading",
              body=ask_s.ConverseRequest, answer=ask_s.Conversation),  # fmt: skip
    Operation("post", "/recall", "The notes for a question, without an answer", body=ask_s.RecallRequest,
              answer=ask_s.Recalled),  # fmt: skip
    Operation("post", "/memorize", "Append a note to today's daily (or the capture inbox)", body=memory_s.MemorizeRequest,
              answer=memory_s.Memorized),  # fmt: skip
    Operation("post", "/forget", "Delete a heading the daemon captured; 409 for any other, or its note held unsaved",
              body=memory_s.ForgetRequest, answer=memory_s.Forgotten),  # fmt: skip
    Operation("get", "/openapi.json", "This description", other=(JSON,)),
    Operation("get", "/", "The web page", other=("text/html",), public=True),
    Operation("get", "/static/{name}", "The web page's files", other=("text/javascript", "text/css", "image/svg+xml"),
              public=True),  # fmt: skip
    Operation("post", "/api/chat", "Ollama chat (grounded for <model>+notes)", "ollama", body=compat_s.OllamaChatRequest,
              other=(NDJSON, JSON)),  # fmt: skip
    Operation("post", "/api/generate", "Ollama generate (grounded for <model>+notes)", "ollama",
              body=compat_s.OllamaGenerateRequest, other=(NDJSON, JSON)),  # fmt: skip
    Operation("get", "/api/tags", "The upstream's models, with grounded variants", "ollama", other=(JSON,)),
    Operation("post", "/api/show", "Details of a model", "ollama", body=compat_s.OllamaModelRequest, other=(JSON,)),
    Operation("get", "/api/version", "The upstream Ollama's version", "ollama", other=(JSON,)),
    Operation("get", "/api/ps", "Models loaded in the upstream", "ollama", other=(JSON,)),
    Operation("post", "/api/embed", "Embeddings from the upstream", "ollama", body=compat_s.OllamaEmbedRequest, other=(JSON,)),
    Operation("post", "/api/embeddings", "Embeddings (older endpoint)", "ollama", body=compat_s.OllamaModelRequest,
              other=(JSON,)),  # fmt: skip
    Operation("post", "/v1/chat/completions", "OpenAI chat completions (grounded for <model>+notes)", "openai",
              body=compat_s.OpenAIChatRequest, other=(JSON, "text/event-stream")),  # fmt: skip
    Operation("get", "/v1/models", "The models, OpenAI style", "openai", other=(JSON,)),
    Operation("get", "/v1/models/{model}", "One model, OpenAI style", "openai", other=(JSON,)),
    Operation("post", "/v1/embeddings", "OpenAI embeddings", "openai", body=compat_s.OpenAIEmbeddingsRequest, other=(JSON,)),
)


def _models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {m.__name__: m for m in ERRORS.values()}
    for op in OPERATIONS:
        for model in (op.body, op.answer):
            if model is not None:
                found[model.__name__] = model
    return list(found.values())


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _parameter(name: str, schema: dict[str, Any], required: bool, where: str) -> dict[str, Any]:
    """A parameter from a model field's schema; ``Optional`` dropped (a query has no null)."""
    schema = {k: v for k, v in schema.items() if k != "title" and not (k == "default" and v is None)}
    options = [o for o in schema.pop("anyOf", []) if o.get("type") != "null"]
    if options:
        schema = {**options[0], **schema} if len(options) == 1 else {"anyOf": options, **schema}
    description = schema.pop("description", None)
    parameter = {"name": name, "in": where, "required": required, "schema": schema}
    return {**parameter, "description": description} if description else parameter


def _operation(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary, "tags": [op.tag], "operationId": f"{op.method}{op.path}"}
    parameters = [_parameter(name, {"type": "string", "minLength": 1}, True, "path")
                  for name in _path_names(op.path)]  # fmt: skip
    if op.query is not None:
        schema = op.query.model_json_schema(ref_template=REF)
        required = set(schema.get("required", ()))
        parameters += [_parameter(name, prop, name in required, "query") for name, prop in schema["properties"].items()]
    if parameters:
        out["parameters"] = parameters
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {JSON: {"schema": _ref(op.body)}}}
    content = {JSON: {"schema": _ref(op.answer)}} if op.answer is not None else {}
    content.update({kind: {"schema": {}} for kind in op.other if kind not in content})
    error = {"description": "an error, in the shape of the API called", "content": {JSON: {"schema": _ref(ERRORS[op.tag])}}}
    out["responses"] = {"200": {"description": "success", "content": content}, "default": error}
    if op.public:
        out["security"] = []
    return out


def _path_names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]


def build_spec() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a JSON-able dict)."""
    _, top = models_json_schema([(m, "validation") for m in _models()], ref_template=REF)
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "arcology-oracle",
            "version": __version__,
            "description": "Search, similar notes and grounded answers from an org-roam directory. Errors of "
            "the native API are {ok: false, error, status}; /api/* answers as Ollama, /v1/* as OpenAI.",
        },
        "paths": paths,
        "components": {
            "schemas": top.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "needed when the daemon has a token"}},  # fmt: skip
        },
        "security": [{"bearer": []}],
    }


spec_key = web.AppKey("openapi_spec", dict)


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(request.app[spec_key])


def setup(app: web.Application) -> None:
    app[spec_key] = build_spec()
    app.router.add_get("/openapi.json", openapi_json)
