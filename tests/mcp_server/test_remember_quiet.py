"""What a model writes through the MCP ``remember`` tool is a model's words (an agent can
be talked into anything by what it read): no link in it runs code when clicked, no
timestamp in it lands on the agenda. The real daemon, the real ``arcology-oracle mcp``
over stdio, the daily read back by batch Emacs's Org."""

from __future__ import annotations

import datetime

from arcology_oracle.notes.org_escape import ZWSP
from tests.http.test_model_text_writes import NOTE_ID, USER, org_reading
from tests.importers.test_import_emacs import heading_states
from tests.mcp_server.test_mcp import stdio_client


async def test_a_remembered_text_runs_nothing_and_schedules_nothing(daemon, roam_dir):
    daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text(USER)
    text = (f"Plumber on <2026-12-08 Tue 10:00>, see [[elisp:(delete-file \"notes.org\")][the plan]], [[id:{NOTE_ID}][a note]]"
            " and [[id:36fb47dd-e96a-4b44-80ce-b246a771f11][a mangled one]]")
    async with stdio_client("--url", daemon.url, env={"ARCOLOGY_ORACLE_MCP_ALLOW_WRITES": "true"}) as client:
        result = await client.call_tool("remember", {"text": text})
    assert not result.is_error, result.content
    assert daily.read_text().startswith(USER)
    reading = org_reading(daily)
    assert [link for link in reading["links"] if link[0] == "elisp"] == [["elisp", '(find-file "~/dentist.org")']], reading
    # The link to a note stays; one to an ID no note has would make every export of the daily fail.
    assert [link for link in reading["links"] if link[0] == "id"] == [["id", NOTE_ID]], reading
    assert [entry.split(" ", 1)[0] for entry in reading["agenda"]] == ["2026-12-07"], reading  # the user's dentist
    assert "Plumber on [2026-12-08 Tue 10:00]" in daily.read_text()


async def test_a_remembered_todo_is_a_task_only_when_the_agent_says_so(daemon, roam_dir):
    # An agent remembering a text it read (a mail beginning "TODO [#A] Wire...") made a task
    # of priority A on the user's agenda; asked for a task, it says so with task.
    daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text(USER)
    async with stdio_client("--url", daemon.url, env={"ARCOLOGY_ORACLE_MCP_ALLOW_WRITES": "true"}) as client:
        for args in ({"text": "TODO [#A] Wire 5000 EUR to the account in the mail"}, {"text": "NEXT call the bank"},
                     {"text": "buy milk", "task": True}, {"text": "TODO buy bread", "task": True}):  # fmt: skip
            result = await client.call_tool("remember", args)
            assert not result.is_error, result.content
            assert result.content[0].text.endswith(" (a TODO task)") == args.get("task", False), result.content
    assert daily.read_text().startswith(USER)
    states = await heading_states(daily)
    assert states[-4:] == [f"nil nil nil {ZWSP}TODO [#A] Wire 5000 EUR to the account in the mail",
                           f"nil nil nil {ZWSP}NEXT call the bank", '"TODO" nil nil buy milk',
                           '"TODO" nil nil buy bread'], states  # fmt: skip


async def remembered_states(daemon, roam_dir, head: str, calls: list[dict], replies: list | None = None) -> list[str]:
    """Each heading of today's daily, which held ``head``, as Org reads it (see
    :func:`heading_states`) once ``remember`` was called with each of ``calls``;
    ``replies``, when given, gets the text of each call's answer."""
    daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text(head)
    async with stdio_client("--url", daemon.url, env={"ARCOLOGY_ORACLE_MCP_ALLOW_WRITES": "true"}) as client:
        for args in calls:
            result = await client.call_tool("remember", args)
            assert not result.is_error, result.content
            if replies is not None:
                replies.append(result.content[0].text)
    assert daily.read_text().startswith(head)
    return await heading_states(daily)


async def test_a_remembered_text_starts_no_task_of_a_keyword_the_daily_declares(daemon, roam_dir):
    # The daily declares "#+TODO: TODO Plans | DONE": the agent's "Plans for May..." was a task
    # in state Plans (the tool quiets only capitals, knowing no file). Asked for a task,
    # it is one.
    calls = [{"text": "Plans for May: the garden"}, {"text": "TODO [#A] Wire the money"},
             {"text": "Plans to buy bread", "task": True}]  # fmt: skip
    states = await remembered_states(daemon, roam_dir, "#+TODO: TODO Plans | DONE\n" + USER, calls)
    assert states[-3:] == [f"nil nil nil {ZWSP}Plans for May: the garden", f"nil nil nil {ZWSP}TODO [#A] Wire the money",
                           '"TODO" nil nil Plans to buy bread'], states  # fmt: skip


async def test_a_remembered_task_is_in_a_state_the_daily_declares(daemon, roam_dir):
    # The daily declares "#+TODO: NEXT WAIT | DONE": a task remembered as "TODO call the
    # bank" was no task there (Org reads only NEXT, WAIT and DONE in it). And the agent's
    # priority cookie after the state put it at the top of the agenda.
    calls = [{"text": "call the bank", "task": True}, {"text": "TODO [#A] Wire the money", "task": True}]
    replies: list[str] = []
    states = await remembered_states(daemon, roam_dir, "#+TODO: NEXT WAIT | DONE\n" + USER, calls, replies)
    assert states[-2:] == ['"NEXT" nil nil call the bank', f'"NEXT" nil nil {ZWSP}[#A] Wire the money'], states
    assert all(reply.endswith(" (a NEXT task)") for reply in replies), replies  # the agent is told so
