"""Fakes that stand in for services at the network edge (see fake_ollama)."""

from .fake_ollama import (
    FakeModel,
    FakeOllama,
    FakeOllamaState,
    cosine,
    default_models,
    fake_embedding,
    fake_reply,
    guess_kind,
    make_app,
    make_state,
    running_fake_ollama,
)

__all__ = [
    "FakeModel",
    "FakeOllama",
    "FakeOllamaState",
    "cosine",
    "default_models",
    "fake_embedding",
    "fake_reply",
    "guess_kind",
    "make_app",
    "make_state",
    "running_fake_ollama",
]
