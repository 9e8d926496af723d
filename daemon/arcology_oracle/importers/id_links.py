"""An imported chat's ``id:`` links to IDs no note has, quieted before it is rendered.

A chat may hold ``[[id:...]]`` links (notes pasted into it, or a model's mangled copy
of one): one to an ID no note has makes every export of the imported file fail (Org
9.5: "Unable to resolve link"). The import runs without the daemon, so which IDs exist
is read from the notes themselves (:func:`~arcology_oracle.notes.note_ids.ids_held`,
once per import, and only when a chat holds an ``id:`` link at all); those of no note
get a zero-width space before their colon, a bracket one between its ``[[``
(:func:`~arcology_oracle.notes.model_text.quiet_id_links`): Org shows the words. A link
to a note stays a link. Read back (:func:`~.render.continues`), the text is the same.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..notes.model_text import id_link_targets, quiet_id_links
from ..notes.note_ids import ids_held
from .model import Conversation


class IdLinks:
    """The notes below ``roam``'s IDs, read the first time a chat needs them."""

    def __init__(self, roam: Path) -> None:
        self.roam = roam
        self._known: set[str] | None = None

    def quieted(self, conversation: Conversation) -> Conversation:
        """``conversation`` with the ``id:`` links of its title and messages to IDs no
        note has quieted (see the module docstring); itself when it has none."""
        title = conversation.title or ""
        if not (ids := set().union(*(id_link_targets(text) for text in (title, *(m.text for m in conversation.messages))))):
            return conversation
        if self._known is None:
            self._known = ids_held(self.roam)
        if not (unknown := ids - self._known):
            return conversation
        return dataclasses.replace(
            conversation, title=quiet_id_links(title, unknown) if title else conversation.title,
            messages=[dataclasses.replace(m, text=quiet_id_links(m.text, unknown)) for m in conversation.messages],
        )  # fmt: skip
