"""Shared by the tests of the Ollama- and OpenAI-compatible APIs: questions about the
example vault and small helpers on clients and recorded chats."""

from __future__ import annotations

COFFEE_ID = "67f94a3f-6549-4356-a04e-da972ad8815e"
COFFEE_QUESTION = "What grind size for pour-over coffee?"
UNRELATED_QUESTION = "Who won the chess world championship in 1972?"


def base_url(client) -> str:
    return str(client.make_url("/")).rstrip("/")


def notes_messages(messages: list[dict]) -> list[dict]:
    """The system messages the daemon added (they hold the numbered notes)."""
    return [m for m in messages if m["role"] == "system" and "<notes>" in m["content"]]
