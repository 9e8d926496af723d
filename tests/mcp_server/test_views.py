"""read_note's org text (mcp_server/views.org_text) says which headings are the oracle's
words: a model reading a conversation must not take its answers for the user's notes."""

from __future__ import annotations

from arcology_oracle.mcp_server.views import note, org_text

NODE = "1111bbbb-0000-4000-8000-000000000001"


def heading(title: str, level: int, role: str | None, body: str = "", heading_id: str | None = None) -> dict:
    return {"heading": title, "level": level, "line": 1, "olp": [], "heading_id": heading_id, "todo": None,
            "tags": [], "body": body, "role": role}  # fmt: skip


def test_the_oracles_headings_keep_their_role_in_the_org_text():
    node = {
        "node_id": NODE, "title": "Kiln talk", "file": "kiln-talk.org", "line": 1, "level": 0, "tags": [],
        "aliases": [], "date": None, "links": [], "backlinks": [],
        "headings": [
            heading("Kiln talk", 0, None, heading_id=NODE),
            heading("Kiln questions", 1, "conversation"),
            heading("Me", 2, "conversation", "What about the kiln?\n"),
            heading("Oracle answer", 2, "oracle", "ORACLEWORDS cone six.\n"),
            heading("Cone temperatures", 3, "oracle", "NESTED cone six.\n"),
        ],
    }  # fmt: skip
    text, _ = org_text(node)
    assert "** Oracle answer\n:PROPERTIES:\n:ROLE:     oracle\n:END:\nORACLEWORDS" in text
    assert "*** Cone temperatures\n:PROPERTIES:\n:ROLE:     oracle\n:END:\nNESTED" in text
    assert "** Me\nWhat about the kiln?" in text, "the user's turn is as written"
    assert note(node).body == text


def test_a_file_node_that_is_the_oracles_says_so_beside_its_id():
    node = {
        "node_id": NODE, "title": "Summary", "file": "s.org", "line": 1, "level": 0, "tags": [], "aliases": [],
        "date": None, "headings": [heading("Summary", 0, "oracle", "FILEROLE\n", heading_id=NODE)],
    }  # fmt: skip
    assert org_text(node)[0] == f":PROPERTIES:\n:ID:       {NODE}\n:ROLE:     oracle\n:END:\nFILEROLE\n"


def test_a_grounded_reply_in_the_users_heading_is_marked_in_the_org_text():
    """A heading of the user's holding a grounded model's reply (``GET /nodes/ID`` gives
    its lines as ``replies``) is the user's, so no drawer says :ROLE: oracle: the reply's
    lines are put between #+begin_oracle and #+end_oracle, the user's stay as written."""
    mine = heading("Tenmoku hold", 1, None, "GPTELREPLY hold it twenty minutes.\nsecond line of it.\n\nMYTYPED I tried.")
    mine |= {"line": 7, "end_line": 11, "replies": [{"line": 8, "end_line": 10}]}
    node = {
        "node_id": NODE, "title": "Tenmoku chat", "file": "t.org", "line": 1, "level": 0, "tags": [], "aliases": [],
        "date": None, "headings": [heading("Tenmoku chat", 0, None, heading_id=NODE), mine],
    }  # fmt: skip
    assert org_text(node)[0] == (
        f":PROPERTIES:\n:ID:       {NODE}\n:END:\n* Tenmoku hold\n"
        "#+begin_oracle\nGPTELREPLY hold it twenty minutes.\nsecond line of it.\n#+end_oracle\n\nMYTYPED I tried.\n"
    )
