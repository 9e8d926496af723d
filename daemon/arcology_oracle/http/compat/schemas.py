"""What the daemon itself reads of the Ollama- and OpenAI-compatible APIs' bodies, as
pydantic models, for ``/openapi.json`` (:mod:`..openapi`) and the fuzzer: the bodies are
passed through to Ollama, so every other field is allowed and kept."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..schemas import Answer


class Passthrough(BaseModel):
    model_config = ConfigDict(extra="allow")


class OllamaModelRequest(Passthrough):
    model: Annotated[str, Field(min_length=1, max_length=500)]


class OllamaChatRequest(OllamaModelRequest):
    messages: list[dict[str, Any]] = []
    stream: bool = True


class OllamaGenerateRequest(OllamaModelRequest):
    prompt: str = ""
    system: str | None = None
    stream: bool = True


class OllamaEmbedRequest(OllamaModelRequest):
    input: str | list[str]


class OllamaError(Answer):
    error: str


class OpenAIChatRequest(OllamaModelRequest):
    messages: list[dict[str, Any]]
    stream: bool = False


class OpenAIEmbeddingsRequest(OllamaModelRequest):
    input: str | list[str]
    encoding_format: Literal["float", "base64"] | None = None


class OpenAIErrorDetail(Passthrough):
    message: str
    type: str


class OpenAIError(Answer):
    error: OpenAIErrorDetail
