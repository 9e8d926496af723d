"""ChatGPT's and Claude's data exports (``conversations.json``), read as a stream.

Both exports are one JSON array of conversations (a top-level object holding it under
``"conversations"`` is read too). :mod:`ijson` yields one conversation at a time, so a
100 MB export never sits in memory whole; ``on_progress(bytes_read, total)`` is called
after each conversation.

ChatGPT: a conversation has ``id`` (or ``conversation_id``), ``title``, ``create_time``
(epoch seconds), ``mapping`` (node id -> ``{message, parent, children}``) and
``current_node``. The conversation as shown is the path from ``current_node`` up through
``parent`` (the other children are edited prompts and regenerated answers, left out;
without ``current_node`` the last child is followed from the root). Kept: messages whose
``author.role`` is ``user`` or ``assistant``, addressed to everyone (``recipient`` ``all``:
tool calls are not), not hidden (``metadata.is_visually_hidden_from_conversation``), with
``content.parts`` text (``text`` and ``multimodal_text``; images are left out).

Claude: a conversation has ``uuid``, ``name``, ``created_at`` (ISO 8601) and
``chat_messages``, each with ``uuid``, ``sender`` (``human`` or ``assistant``),
``created_at`` and its text: the ``text`` blocks of ``content`` when there are any (tool
use and thinking blocks are left out), else ``text``. Edited prompts and regenerated
answers make branches (``parent_message_uuid``): the conversation as shown is the path
from ``current_leaf_message_uuid`` (else the newest message) up through the parents.

The user's turns are named ``me`` (``Me`` by default), the assistant's ``ChatGPT`` or
``Claude``. A JSON syntax error, a string that is not Unicode (a lone surrogate such as
``\\udcff``), a conversation that is not an object, one without an id or its messages,
a node whose ``parent`` is not an id or null or whose ``children`` is not a list of ids,
and a Claude message whose ``uuid`` is not a string, raise :class:`.MalformedExport`
naming the conversation and the byte.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import ijson

from .model import Conversation, MalformedExport, Message

Progress = Callable[[int, int], None]


def read_chatgpt(fh: BinaryIO, name: str, *, me: str = "Me", on_progress: Progress | None = None) -> Iterator[Conversation]:
    """The conversations of a ChatGPT export; see the module docstring."""
    for n, item in _items(fh, name, on_progress):
        yield _chatgpt(item, n, name, fh, me)


def read_claude(fh: BinaryIO, name: str, *, me: str = "Me", on_progress: Progress | None = None) -> Iterator[Conversation]:
    """The conversations of a Claude export; see the module docstring."""
    for n, item in _items(fh, name, on_progress):
        yield _claude(item, n, name, fh, me)


def _items(fh: BinaryIO, name: str, on_progress: Progress | None) -> Iterator[tuple[int, Any]]:
    total = _size(fh)
    first = _first_byte(fh)
    if first == b"{":
        prefix = "conversations.item"
    elif first == b"[":
        prefix = "item"
    else:
        raise MalformedExport(name, "byte 0", "not a JSON list of conversations")
    n = 0
    try:
        for n, item in enumerate(ijson.items(fh, prefix, use_float=True), 1):
            yield n, item
            if on_progress:
                on_progress(fh.tell(), total)
    except ijson.JSONError as exc:
        raise MalformedExport(name, f"after conversation {n}, near byte {fh.tell()}", f"invalid JSON ({exc})") from None
    except UnicodeDecodeError:
        # yajl writes a \u escape of a lone surrogate as bytes that are not UTF-8.
        raise MalformedExport(name, f"after conversation {n}, near byte {fh.tell()}",
                              "a JSON string that is not Unicode text (a lone surrogate such as \\udcff)") from None  # fmt: skip
    if n == 0 and first == b"{":
        raise MalformedExport(name, "byte 0", 'an object without a "conversations" list')
    if on_progress:
        on_progress(total, total)


def _chatgpt(item: Any, n: int, name: str, fh: BinaryIO, me: str) -> Conversation:
    where = f"conversation {n} (near byte {fh.tell()})"
    if not isinstance(item, dict):
        raise MalformedExport(name, where, "a conversation must be a JSON object")
    key = item.get("conversation_id") or item.get("id")
    mapping = item.get("mapping")
    if not isinstance(key, str) or not key:
        raise MalformedExport(name, where, "the conversation has no id")
    if not isinstance(mapping, dict) or not all(isinstance(v, dict) for v in mapping.values()):
        raise MalformedExport(name, f"{where}, id {key}", "no mapping of message nodes")
    for node_id, node in mapping.items():
        parent, children = node.get("parent"), node.get("children")
        if parent is not None and not isinstance(parent, str):
            raise MalformedExport(name, f"{where}, id {key}, node {node_id}", '"parent" must be a node id or null')
        if children is not None and not (isinstance(children, list) and all(isinstance(c, str) for c in children)):
            raise MalformedExport(name, f"{where}, id {key}, node {node_id}", '"children" must be a list of node ids')
    conversation = Conversation("chatgpt", key, str(item.get("title") or ""), time=_epoch(item.get("create_time")))
    for node_id in _shown_branch(mapping, item.get("current_node"), f"{where}, id {key}", name):
        message = mapping[node_id].get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        role = author.get("role")
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if role not in ("user", "assistant") or message.get("recipient", "all") != "all":
            continue
        if metadata.get("is_visually_hidden_from_conversation"):
            continue
        content = message.get("content") if isinstance(message.get("content"), dict) else {}
        if content.get("content_type", "text") not in ("text", "multimodal_text"):
            continue
        parts = content.get("parts")
        text = "\n".join(p for p in parts if isinstance(p, str)) if isinstance(parts, list) else ""
        if text.strip():
            speaker = me if role == "user" else "ChatGPT"
            key_of = str(message.get("id") or node_id)
            conversation.messages.append(Message(key_of, speaker, text, _epoch(message.get("create_time"))))
    return conversation


def _shown_branch(mapping: dict[str, dict], current: Any, where: str, name: str) -> list[str]:
    """The node ids from the root to ``current`` (the branch the user last saw)."""
    if not isinstance(current, str) or current not in mapping:
        roots = [k for k, v in mapping.items() if v.get("parent") not in mapping]
        current = roots[0] if roots else None
        walked: set[str] = set()
        while current is not None and current not in walked:
            walked.add(current)
            children = [c for c in mapping[current].get("children") or () if c in mapping]
            if not children:
                break
            current = children[-1]
        if current is None:
            return []
    path: list[str] = []
    seen: set[str] = set()
    node: Any = current
    while isinstance(node, str) and node in mapping:
        if node in seen:
            raise MalformedExport(name, where, f"the message nodes' parents loop at {node}")
        seen.add(node)
        path.append(node)
        node = mapping[node].get("parent")
    return path[::-1]


def _claude(item: Any, n: int, name: str, fh: BinaryIO, me: str) -> Conversation:
    where = f"conversation {n} (near byte {fh.tell()})"
    if not isinstance(item, dict):
        raise MalformedExport(name, where, "a conversation must be a JSON object")
    key = item.get("uuid")
    messages = item.get("chat_messages")
    if not isinstance(key, str) or not key:
        raise MalformedExport(name, where, "the conversation has no uuid")
    if not isinstance(messages, list):
        raise MalformedExport(name, f"{where}, uuid {key}", "no chat_messages list")
    conversation = Conversation("claude", key, str(item.get("name") or ""), time=_iso(item.get("created_at"), name, where))
    for i, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise MalformedExport(name, f"{where}, uuid {key}, message {i}", "a message must be a JSON object")
        if message.get("uuid") is not None and not isinstance(message.get("uuid"), str):
            raise MalformedExport(name, f"{where}, uuid {key}, message {i}", '"uuid" must be a string')
    shown = _claude_branch(messages, item.get("current_leaf_message_uuid"), f"{where}, uuid {key}", name)
    for i, message in enumerate(messages, 1):
        if shown is not None and message.get("uuid") not in shown:
            continue
        sender = message.get("sender")
        if sender not in ("human", "assistant"):
            continue
        blocks = message.get("content")
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)] if isinstance(blocks, list) else []
        text = "\n\n".join(texts) if texts else message.get("text") if isinstance(message.get("text"), str) else ""
        if text.strip():
            when = _iso(message.get("created_at"), name, f"{where}, uuid {key}, message {i}")
            speaker = me if sender == "human" else "Claude"
            conversation.messages.append(Message(str(message.get("uuid") or i), speaker, text, when))
    return conversation


def _claude_branch(messages: list[dict], leaf: Any, where: str, name: str) -> set[str] | None:
    """The uuids of the messages on the branch the user last saw: from
    ``current_leaf_message_uuid`` (else the last message created) up through
    ``parent_message_uuid``; None when the messages name no parents (all are shown)."""
    by_uuid = {m["uuid"]: m for m in messages if isinstance(m.get("uuid"), str)}
    if not any(isinstance(m.get("parent_message_uuid"), str) for m in by_uuid.values()):
        return None
    if not isinstance(leaf, str) or leaf not in by_uuid:
        # The newest message: an edit or a regeneration starts a newer branch; the
        # list's order breaks ties.
        oldest = datetime.datetime.min.replace(tzinfo=datetime.UTC)
        order = sorted(
            enumerate(by_uuid.values()), key=lambda e: (_iso(e[1].get("created_at"), name, where) or oldest, e[0])
        )
        leaf = order[-1][1]["uuid"]
    shown: set[str] = set()
    node: Any = leaf
    while isinstance(node, str) and node in by_uuid:
        if node in shown:
            raise MalformedExport(name, where, f"the messages' parents loop at {node}")
        shown.add(node)
        node = by_uuid[node].get("parent_message_uuid")
    return shown


def _epoch(value: Any) -> datetime.datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 32503680000:
        return datetime.datetime.fromtimestamp(value, datetime.UTC)
    return None


def _iso(value: Any, name: str, where: str) -> datetime.datetime | None:
    if not value:
        return None
    try:
        moment = datetime.datetime.fromisoformat(str(value))
    except ValueError:
        raise MalformedExport(name, where, f"{value!r} is not an ISO 8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def _size(fh: BinaryIO) -> int:
    at = fh.tell()
    end = fh.seek(0, 2)
    fh.seek(at)
    return end


def _first_byte(fh: BinaryIO) -> bytes:
    at = fh.tell()
    head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    fh.seek(at)
    if fh.read(3) != b"\xef\xbb\xbf":
        fh.seek(at)
    return head[:1]
