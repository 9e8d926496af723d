"""Property test: private, crypt and excluded content never leaves the org files.

Hypothesis builds small vaults of random heading trees. Some headings (and whole files)
are excluded: tagged ``private`` (any case, alone or among other tags), ``crypt``, or a
configured private tag, given ``ROAM_EXCLUDE``, or holding a PGP block; their subtrees
go with them. Every heading title, body and ID carries a unique marker word. The real
app (index, embedding through the fake Ollama, HTTP routes) serves the vault; then one
visible heading is made private and re-indexed. The markers of everything excluded at
either moment must appear in no response (search, similar, heading, nodes, ask,
summarize), no text sent to the embedder or the chat model, and no byte of the database
(file, WAL, journal) once it is closed; every visible marker must be in the database (so
the test can see text when it is there).

The fake chat model echoes the whole prompt, so any note text in a prompt also shows up
in answers and in cached summaries.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcology_oracle.config import load_settings
from arcology_oracle.http.app import create_app
from arcology_oracle.http.keys import index_key, ready_key, worker_key
from tests.corpus_tools import db_bytes
from tests.fakes.fake_ollama import running_fake_ollama

pytestmark = pytest.mark.timeout(300)

EXAMPLES = int(os.environ.get("ARCOLOGY_PRIVACY_EXAMPLES", "12"))
PRIVATE_TAGS = ("private", "secret")

# What makes a heading excluded, and decoys that must not.
EXCLUDING = ("private", "Private", "PRIVATE", "crypt", "secret", "multi", "roam_exclude", "pgp")
HARMLESS = (None, None, None, None, "privateer", "cryptography", "notprivate", "secretary", "exclude_nil")
FILE_KINDS = (None, None, None, "filetags_private", "filetags_crypt", "filetags_secret", "FILETAGS_multi", "roam_exclude")

heading_spec = st.tuples(
    st.integers(1, 4),  # wished level (clamped to parent + 1)
    st.sampled_from(EXCLUDING + HARMLESS * 2),
    st.booleans(),  # has an ID
)
file_spec = st.tuples(st.sampled_from(FILE_KINDS), st.lists(heading_spec, min_size=1, max_size=7))
vault_spec = st.tuples(
    st.lists(file_spec, min_size=1, max_size=3),
    st.integers(0, 1000),  # which visible heading is made private later
    st.sampled_from(("private", "roam_exclude", "crypt")),
)


@dataclass
class Heading:
    level: int
    kind: str | None
    node_id: str | None
    title_marker: str
    body_marker: str
    excluded: bool = False


@dataclass
class OrgFile:
    rel: str
    kind: str | None
    file_id: str
    markers: tuple[str, str]  # title, preamble
    headings: list[Heading] = field(default_factory=list)

    def render(self) -> str:
        lines = [":PROPERTIES:", f":ID:       {self.file_id}"]
        if self.kind == "roam_exclude":
            lines.append(":ROAM_EXCLUDE: t")
        lines += [":END:", f"#+title: Title {self.markers[0]}"]
        tags = {"filetags_private": ":private:", "filetags_crypt": ":crypt:", "filetags_secret": ":secret:",
                "FILETAGS_multi": ":work:Private:"}.get(self.kind)  # fmt: skip
        if tags:
            keyword = "#+FILETAGS:" if self.kind == "FILETAGS_multi" else "#+filetags:"
            lines.append(f"{keyword} {tags}")
        lines += ["", f"Preamble text with {self.markers[1]} in it.", ""]
        for h in self.headings:
            lines += _render_heading(h)
        return "\n".join(lines) + "\n"


def _render_heading(h: Heading) -> list[str]:
    tag = {"private": "private", "Private": "Private", "PRIVATE": "PRIVATE", "crypt": "crypt", "secret": "secret",
           "multi": "work:private:later", "privateer": "privateer", "cryptography": "cryptography",
           "notprivate": "notprivate", "secretary": "secretary"}.get(h.kind or "")  # fmt: skip
    lines = [f"{'*' * h.level} Heading {h.title_marker}" + (f"    :{tag}:" if tag else "")]
    props = []
    if h.node_id:
        props.append(f":ID:       {h.node_id}")
    if h.kind == "roam_exclude":
        props.append(":ROAM_EXCLUDE: t")
    if h.kind == "exclude_nil":
        props.append(":ROAM_ALIASES: excluded")
    if props:
        lines += [":PROPERTIES:", *props, ":END:"]
    lines += [f"Body text of this heading about {h.body_marker} and more words.", ""]
    if h.kind == "pgp":
        lines += ["-----BEGIN PGP MESSAGE-----", "", "hQEMA5vYxyz" + h.body_marker + "pgp", "-----END PGP MESSAGE-----", ""]
    return lines


class Vault:
    """Files built from a drawn spec, with every marker and whether it is excluded."""

    def __init__(self, spec, later_kind: str):
        self.later_kind = later_kind
        self.files: list[OrgFile] = []
        n = 0

        def marker() -> str:
            nonlocal n
            n += 1
            return "mk" + "".join(chr(ord("a") + int(d)) for d in f"{n:04d}") + "z"

        for f, (kind, headings) in enumerate(spec):
            org = OrgFile(f"dir{f % 2}/note{f}.org", kind, f"00000000-0000-4000-8000-{f:012d}", (marker(), marker()))
            stack: list[Heading] = []
            for h, (wished, hkind, has_id) in enumerate(headings):
                level = min(wished, (stack[-1].level + 1) if stack else 1)
                while stack and stack[-1].level >= level:
                    stack.pop()
                node_id = f"10000000-0000-4000-8000-{f:04d}{h:08d}" if has_id or hkind == "roam_exclude" else None
                heading = Heading(level, hkind, node_id, marker(), marker())
                heading.excluded = bool(kind) or hkind in EXCLUDING or any(p.excluded for p in stack)
                stack.append(heading)
                org.headings.append(heading)
            self.files.append(org)

    def write(self, root: Path) -> None:
        for org in self.files:
            path = root / org.rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(org.render(), encoding="utf-8")

    def secrets(self) -> set[str]:
        """Markers (and IDs) of everything excluded."""
        out = set()
        for org in self.files:
            if org.kind:
                out |= {*org.markers, org.file_id}
            for h in org.headings:
                if h.excluded:
                    out |= {h.title_marker, h.body_marker} | ({h.node_id} if h.node_id else set())
        return out

    def visible(self) -> set[str]:
        out = set()
        for org in self.files:
            if not org.kind:
                out |= set(org.markers)
            out |= {m for h in org.headings if not h.excluded for m in (h.title_marker, h.body_marker)}
        return out

    def visible_headings(self) -> list[tuple[OrgFile, Heading]]:
        return [(org, h) for org in self.files for h in org.headings if not h.excluded]

    def make_private(self, which: int) -> OrgFile | None:
        """Exclude one visible heading (and its subtree) the way ``later_kind`` says."""
        candidates = self.visible_headings()
        if not candidates:
            return None
        org, target = candidates[which % len(candidates)]
        target.kind = self.later_kind
        if target.kind == "roam_exclude" and target.node_id is None:
            target.node_id = "20000000-0000-4000-8000-000000000001"
        inside = False
        for h in org.headings:
            if h is target:
                inside, h.excluded = True, True
            elif inside and h.level > target.level:
                h.excluded = True
            elif inside:
                break
        return org


def leaks(text: str, secrets: set[str]) -> set[str]:
    return {s for s in secrets if s in text}


class Probe:
    """Sends every kind of request a client can make about the vault, collecting what comes back."""

    def __init__(self, client: TestClient, vault: Vault):
        self.client = client
        self.vault = vault
        self.seen: list[str] = []

    async def get(self, path: str, **params) -> None:
        async with self.client.get(path, params=params) as resp:
            assert resp.status < 500, (path, params, await resp.text())
            self.seen.append(await resp.text())

    async def post(self, path: str, body: dict) -> None:
        async with self.client.post(path, json=body) as resp:
            assert resp.status < 500, (path, body, await resp.text())
            self.seen.append(await resp.text())

    async def everything(self, secrets: set[str]) -> None:
        visible = sorted(self.vault.visible())
        for word in sorted(secrets)[:6] + visible[:6]:
            await self.get("/search", q=word, k="20")
        await self.get("/search", q=" ".join(visible[:10]), k="50")
        await self.post("/similar", {"text": " ".join(visible[:10]) or "heading", "k": 50})
        for org in self.vault.files:
            lines = org.render().count("\n")
            for line in range(1, lines + 1, 3):
                await self.get("/heading", file=org.rel, line=str(line))
            await self.get("/similar", file=org.rel, line="1", k="50")
            await self.post("/summarize", {"file": org.rel})
            ids = [org.file_id] + [h.node_id for h in org.headings if h.node_id]
            for node_id in ids:
                if node_id in secrets:  # not indexed at all (the 404 names the ID asked for)
                    async with self.client.get(f"/nodes/{node_id}") as resp:
                        assert resp.status == 404, node_id
                    continue
                await self.get(f"/nodes/{node_id}")
                await self.get("/similar", node=node_id, k="50")
                await self.post("/summarize", {"node": node_id})
        question = "What do my notes say about " + " ".join(visible[:8] or ["headings"])
        await self.post("/ask", {"question": question, "k": 20})
        await self.post("/ask", {"question": question, "stream": True})


async def serve_and_probe(vault: Vault, root: Path, later: int) -> set[str]:
    """Run the whole scenario; returns every secret (for the database check after close)."""
    async with running_fake_ollama() as fake:
        state = fake.state
        state.chat_reply = lambda messages: " ".join(str(m.get("content", "")) for m in messages)
        app_settings = load_settings(
            overrides={
                "roam_dir": root / "roam",
                "db_path": root / "index.sqlite3",
                "ollama_host": fake.url,
                "private_tags": PRIVATE_TAGS,
                "connect_timeout": 2,
            },
            environ={},
        )
        app = create_app(app_settings, watch=False)
        async with TestClient(TestServer(app)) as client:
            await asyncio.wait_for(app[ready_key].wait(), 30)
            await asyncio.wait_for(app[worker_key].idle.wait(), 30)
            secrets = vault.secrets()
            assert not leaks(json.dumps(state.embedded_texts), secrets), "excluded text sent to the embedder"

            probe = Probe(client, vault)
            await probe.everything(secrets)
            assert not leaks("\n".join(probe.seen), secrets), "excluded text in a response"
            assert not leaks(json.dumps(state.requests.get("/api/chat", [])), secrets), "excluded text in a prompt"

            # A visible heading is made private; its text must go everywhere.
            changed = vault.make_private(later)
            if changed is not None:
                state.clear_records()
                (root / "roam" / changed.rel).write_text(changed.render(), encoding="utf-8")
                await app[index_key].index_paths([changed.rel])
                app[worker_key].wake()
                await asyncio.wait_for(app[worker_key].idle.wait(), 30)
                secrets = vault.secrets()
                assert not leaks(json.dumps(state.embedded_texts), secrets), "excluded text sent to the embedder"
                probe.seen.clear()
                await probe.everything(secrets)
                assert not leaks("\n".join(probe.seen), secrets), "text made private is still served"
                assert not leaks(json.dumps(state.requests.get("/api/chat", [])), secrets), "text made private in a prompt"
        return secrets


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(vault_spec)
def test_excluded_text_never_leaves_the_notes(tmp_path, spec):
    files, later, later_kind = spec
    vault = Vault(files, later_kind)
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    vault.write(root / "roam")
    secrets = asyncio.run(serve_and_probe(vault, root, later))
    raw = db_bytes(root / "index.sqlite3")  # every connection is closed by now
    assert not {s for s in secrets if s.encode() in raw}, "excluded text in the database"
    missing = {v for v in vault.visible() if v.encode() not in raw}
    assert not missing, "visible text missing from the database: the test could not see a leak"
