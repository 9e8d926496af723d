"""The relevance gate reads a question's subject, not its frame: "what do I know about
sourdough?" and "when did I first write about sourdough?" find the notes "sourdough"
finds, whatever the embedder makes of the frame words (the keyword part must not depend
on the vectors passing)."""

from __future__ import annotations

import pytest

from arcology_oracle.answers.context import gather_context
from tests.org_samples import IDS


@pytest.mark.parametrize(
    "question",
    ["sourdough", "what do I know about sourdough?", "when did I first write about sourdough?",
     "what do I remember about sourdough?"],
)  # fmt: skip
async def test_frame_words_do_not_hide_the_subject(index, question):
    context = await gather_context(index, question)
    assert context.mode == "vector"
    assert IDS["starter"] in [s.node_id for s in context.sources], question
