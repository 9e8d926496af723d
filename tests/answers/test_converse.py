"""Org conversations: reading turns, writing the oracle's heading (orgconv), and
Oracle.converse end to end against the fake Ollama."""

from __future__ import annotations

import datetime as dt
import re

import orgparse
import pytest

from arcology_oracle.answers.oracle import Oracle
from arcology_oracle.errors import BadRequest
from arcology_oracle.notes import conversations as orgconv
from arcology_oracle.ollama.chat import OllamaChat
from tests.org_samples import IDS, SECRET_WORDS

WHEN = dt.datetime(2024, 3, 1, 14, 5)


def roles(conversation):
    return [t.role for t in conversation.turns]


def test_children_alternate_by_default():
    c = orgconv.parse_conversation("* Topic\nbody\n** Q1\n** A1\n** Q2\n")
    assert (c.level, c.title, c.body) == (1, "Topic", "body")
    assert roles(c) == ["user", "assistant", "user"]
    assert c.question == "Q2"
    assert c.messages() == [
        {"role": "user", "content": "Topic\n\nbody\n\nQ1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "Q2"},
    ]


def test_role_property_and_marker_decide_and_unmarked_turns_are_the_users():
    org = (
        "** Topic\n"
        "*** First question\n"
        "*** Oracle\n:PROPERTIES:\n:ROLE: oracle\n:END:\nAn answer [1].\n\nSources:\n- [1] [[id:x][X]]\n"
        "*** Follow-up one\n"
        "*** Follow-up two\n"
        "*** Bot says :oracle:\nTagged answer.\n"
        "*** Me again\n:PROPERTIES:\n:ROLE: user\n:END:\nlast words\n"
    )
    c = orgconv.parse_conversation(org)
    assert c.level == 2
    assert roles(c) == ["user", "assistant", "user", "user", "assistant", "user"]
    assert c.turns[1].text == "An answer."  # its old Sources list and numbers dropped
    assert c.question == "Me again\n\nlast words"
    msgs = c.messages()
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"] == "Follow-up one\n\nFollow-up two"
    custom = orgconv.parse_conversation("* T\n** Q\n** AI: answer\n** Q2\n", marker="AI")
    assert roles(custom) == ["user", "assistant", "user"]


def test_headings_tags_and_drawers_follow_org():
    org = (
        "* Topic :#project:%draft:\n"
        "** Question :q@home:\n"
        "** Reply :oracle:#kept%:\n:LOGBOOK2:\n- clocked\n:END:\nTagged answer.\n"
        "** Next :oracle::draft:\nEmpty tags between colons are none: still the oracle's.\n"
        "** Re:oracle:\n*\tnot a heading: Org wants a space after the stars\n"
    )
    c = orgconv.parse_conversation(org)
    assert c.title == "Topic"
    assert [(t.title, t.role) for t in c.turns] == [
        ("Question", "user"),
        ("Reply", "assistant"),
        ("Next", "assistant"),
        ("Re:oracle:", "user"),  # no space before ":oracle:", so no tag
    ]
    assert c.turns[1].text == "Reply\n\nTagged answer."  # the :LOGBOOK2: drawer left out
    assert c.question.endswith("*\tnot a heading: Org wants a space after the stars")


def test_deeper_headings_belong_to_their_turn_and_the_subtree_ends():
    org = "text before\n* Topic\n** Q\n*** detail\nmore\n** A\n** Q2\n* Another tree\n** not a turn\n"
    c = orgconv.parse_conversation(org)
    assert [t.title for t in c.turns] == ["Q", "A", "Q2"]
    assert c.turns[0].text == "Q\n\n* detail\nmore"


def test_conversation_errors():
    with pytest.raises(BadRequest):
        orgconv.parse_conversation("no heading at all")
    with pytest.raises(BadRequest, match="last turn"):
        orgconv.parse_conversation("* T\n** Q\n** A\n")


def test_org_safe_never_makes_headings():
    text = "* point\n** sub point\n# Markdown title\n```python\n* not heading\n#+begin_x\n```\nplain *bold*"
    safe = orgconv.org_safe(text)
    assert not any(re.match(r"^\*+\s", line) for line in safe.splitlines())
    assert "- point" in safe and "  - sub point" in safe and "*Markdown title*" in safe
    assert "#+begin_src python :eval no :tangle no :noweb no\n,* not heading\n,#+begin_x\n#+end_src" in safe


def test_org_safe_writes_markdown_bold_and_code_as_org():
    safe = orgconv.org_safe("* **Feed it** twice, **Note:** use `rye` ** not bold**\n```\n**kept** `as is`\n```")
    assert safe == "- *Feed it* twice, *Note:* use ~rye~ ** not bold**\n#+begin_src\n,**kept** `as is`\n#+end_src"


def test_render_answer_is_a_well_formed_heading():
    out = orgconv.render_answer(
        "* one\nTwo [1].", "- [1] [[id:abc][Note]]", level=3, model="llama3.2", when=WHEN
    )
    root = orgparse.loads(out)
    (node,) = root.children
    assert node.level == 3 and node.heading == "Oracle"
    assert node.properties["ROLE"] == "oracle" and node.properties["ORACLE_MODEL"] == "llama3.2"
    assert out.splitlines()[4] == ":CREATED:  [2024-03-01 Fri 14:05]"
    assert "Sources:\n- [1] [[id:abc][Note]]" in out and out.endswith("\n")
    assert ":SOURCES:" not in out
    cited = orgconv.render_answer("Two [1].", "- [1] Note", level=2, model="m", when=WHEN, source_targets="abc file:x.org::3")
    assert orgparse.loads(cited).children[0].properties["SOURCES"] == "abc file:x.org::3"
    none = orgconv.render_answer("x", "", level=2, model="m", when=WHEN, used_notes=False)
    assert "Sources:\n- none" in none


async def test_converse_writes_links_with_answer_source_links(make_settings, fake_ollama):
    """The old way, kept by a setting: the sources as [[id:]] links, no :SOURCES:."""
    from arcology_oracle.index.service import OracleIndex

    index = OracleIndex(make_settings(ollama_host=fake_ollama.url, answer_source_links=True))
    await index.start()
    await index.reconcile()
    await index.embed_pending()
    llm = OllamaChat(index.settings)
    try:
        result = await Oracle(index, llm).converse("* How often should I feed my sourdough starter?\n", when=WHEN)
    finally:
        await llm.close()
        await index.close()
    links = re.findall(r"\[\[id:([^\]]+)\]\[([^\]]+)\]\]", result.org)
    assert [node for node, _ in links] == [s.node_id for s in result.sources if s.node_id] and links
    assert ":SOURCES:" not in result.org


@pytest.fixture
async def oracle(index):
    llm = OllamaChat(index.settings)
    yield Oracle(index, llm)
    await llm.close()


async def test_converse_answers_one_level_below_the_root(oracle, index, fake_ollama):
    org = (
        "** Baking questions\n"
        "*** How often should I feed my sourdough starter?\n"
        "*** Oracle\n:PROPERTIES:\n:ROLE: oracle\n:END:\nTwice a week.\n"
        "*** And which flour do I feed it with?\n"
    )
    result = await oracle.converse(org, when=WHEN)
    heading = result.org
    assert heading.startswith("*** Oracle\n")
    assert result.used_notes and result.sources
    # It slots into the conversation as the oracle's next turn.
    again = orgconv.parse_conversation(org + heading + "*** Thanks!\n")
    assert roles(again) == ["user", "assistant", "user", "assistant", "user"]
    # Its sources: their IDs in a :SOURCES: property (indexed nodes, in order) and a
    # plain list, no id: link (org-roam would list a backlink on every cited note).
    assert not re.search(r"\[\[id:", heading)
    targets = orgparse.loads(heading).children[0].properties["SOURCES"].split()
    assert targets == [f"{s.node_id}::{s.file}::{s.line}" if s.node_id else f"file:{s.file}::{s.line}" for s in result.sources]
    ids = [t.split("::")[0] for t in targets]
    for node in ids:
        assert node.startswith("file:") or await index.node(node)
    assert IDS["starter"] in ids
    assert "Sources:\n" + "\n".join(f"- [{s.n}] {s.label}" for s in result.sources) in heading
    # The model saw the whole conversation, with the notes in the system prompt.
    messages = fake_ollama.state.chats[-1]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "<notes>" in messages[0]["content"] and "equal weights of flour and water" in messages[0]["content"]
    n = [s.n for s in result.sources]
    assert result.answer.startswith("Based on your notes " + " ".join(f"[{i}]" for i in n))


async def test_converse_topic_alone_and_privacy(oracle, fake_ollama):
    org = (
        "* What did I note about sqlite covering indexes?\n"
        "** Aside :private:\nprivatepelican zanzibarsecret\n"
    )
    result = await oracle.converse(org, when=WHEN)
    assert result.org.startswith("** Oracle")
    assert IDS["covering_indexes"] in [s.node_id for s in result.sources]
    for m in fake_ollama.state.chats[-1]:
        for word in SECRET_WORDS:
            assert word not in m["content"]


async def test_converse_without_relevant_notes(oracle):
    result = await oracle.converse("* Who won the football world cup in 1998?\n", when=WHEN)
    assert not result.used_notes and "Sources:\n- none" in result.org


def test_render_answer_lone_cr_is_an_escaped_line_break():
    # Emacs keeps a lone CR as a character in the buffer, but saves it as a line break in
    # a file with CR line endings: what follows it must be escaped as a line of its own.
    answer = "Sure.\r* Buy a gift :work:\r:PROPERTIES:\r:ID: 0000\r:END:\r#+filetags: :private:"
    out = orgconv.render_answer(answer, "- [[id:abc][Note]]", level=2, model="m", when=WHEN)
    assert "\r" not in out
    saved = out.replace("\n", "\r")  # the bytes of a file with CR line endings
    lines = saved.split("\r")
    assert [line for line in lines if re.match(r"^\*+\s", line)] == ["** Oracle"]
    assert not any(line.lower().startswith("#+filetags") for line in lines)
    assert "- Buy a gift :work:" in lines and ",#+filetags: :private:" in lines
