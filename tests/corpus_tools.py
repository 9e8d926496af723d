"""Generated vaults and index snapshots for the crash, load, filesystem and privacy tests.

* :func:`write_corpus` writes a deterministic vault of ``n`` org notes (nested headings,
  heading nodes, id links, tags, src blocks; one word per file, ``w{seed}x{i}``-style, that
  occurs nowhere else so a test can search for exactly that file).
* :func:`edit_burst` rewrites, creates, deletes and renames notes as an editor or a
  ``git checkout`` would; :func:`emacs_save` saves one the way Emacs does.
* :func:`index_snapshot` reads an index database into comparable sets (ignoring row ids
  and mtimes) plus a list of integrity problems (duplicates, orphans, FTS drift).
* :func:`clean_snapshot` builds the reference: a fresh database indexed in-process by
  :class:`~arcology_oracle.index.service.OracleIndex` from the same files.
"""

from __future__ import annotations

import os
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from arcology_oracle.config import Settings
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store.db import connect

VOCABULARY = (
    "flour water starter dough oven crumb crust ferment yeast salt tomato seedling garden "
    "compost blight borrow lifetime ownership trait closure index planner query btree "
    "emacs buffer window frame macro keymap coffee grinder kettle bloom extraction bicycle "
    "chain derailleur saddle violin bow rosin scale harmony meter lecture proof lemma "
    "theorem matrix vector kernel glacier moraine basalt granite river delta estuary"
).split()


def file_word(seed: int, i: int) -> str:
    """The word only note ``i`` of corpus ``seed`` contains (letters only: one FTS token)."""
    return "uniq" + _letters(seed * 100_003 + i)


def _letters(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 26)
        out += chr(ord("a") + r)
        if n == 0:
            return out + "q"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _sentence(rng: random.Random, n: int | None = None) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(n or rng.randint(6, 18))).capitalize() + "."


def note_text(rng: random.Random, word: str, *, headings: int, file_id: str, link_ids=()) -> str:
    """One org-roam note: file node with ``word`` in its preamble, nested headings."""
    lines = [":PROPERTIES:", f":ID:       {file_id}", ":END:", f"#+title: {word.capitalize()} {rng.choice(VOCABULARY)}"]
    if rng.random() < 0.3:
        lines.append(f"#+filetags: :{rng.choice(VOCABULARY)}:")
    lines += ["", f"{_sentence(rng)} {word}.", ""]
    level = 1
    for h in range(headings):
        level = max(1, min(4, level + rng.choice((-1, 0, 0, 1)))) if h else 1
        tag = f" :{rng.choice(VOCABULARY)}:" if rng.random() < 0.15 else ""
        todo = "TODO " if rng.random() < 0.1 else ""
        lines.append(f"{'*' * level} {todo}{rng.choice(VOCABULARY).capitalize()} {rng.choice(VOCABULARY)} {h}{tag}")
        if rng.random() < 0.25:
            lines += [":PROPERTIES:", f":ID:       {_uuid(rng)}", ":END:"]
        for _ in range(rng.randint(1, 3)):
            sentence = _sentence(rng)
            if link_ids and rng.random() < 0.3:
                sentence += f" See [[id:{rng.choice(link_ids)}][a note]]."
            lines += [sentence, ""]
        if rng.random() < 0.1:
            lines += ["#+begin_src python", f"{rng.choice(VOCABULARY)} = {h}", "#+end_src", ""]
        if rng.random() < 0.05:  # a long body: several chunks
            lines += [" ".join(_sentence(rng, 30) for _ in range(10)), ""]
    return "\n".join(lines) + "\n"


@dataclass
class Corpus:
    """A written vault: ``files`` maps each relative path to the word only it contains."""

    root: Path
    seed: int
    files: dict[str, str] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    rng: random.Random = field(default_factory=random.Random)
    counter: int = 0

    def new_note(self, rel: str | None = None, *, headings: int | None = None) -> str:
        i = self.counter
        self.counter += 1
        word = file_word(self.seed, i)
        rel = rel or f"{('d' + str(i % 7) + '/') if i % 3 else ''}note-{i:05d}.org"
        file_id = _uuid(self.rng)
        text = note_text(self.rng, word, headings=headings or self.rng.randint(1, 5), file_id=file_id, link_ids=self.ids[-50:])
        self.ids.append(file_id)
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.files[rel] = word
        return rel

    def rewrite(self, rel: str) -> None:
        """New text (and a new unique word) for an existing note."""
        i = self.counter
        self.counter += 1
        word = file_word(self.seed, i)
        text = note_text(self.rng, word, headings=self.rng.randint(1, 5), file_id=_uuid(self.rng), link_ids=self.ids[-50:])
        (self.root / rel).write_text(text, encoding="utf-8")
        self.files[rel] = word

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()
        del self.files[rel]

    def rename(self, rel: str, new_rel: str) -> None:
        (self.root / new_rel).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.root / rel, self.root / new_rel)
        self.files[new_rel] = self.files.pop(rel)


def write_corpus(root: Path, n_files: int, *, seed: int = 0) -> Corpus:
    """Write ``n_files`` notes below ``root`` (deterministic for a seed)."""
    corpus = Corpus(root, seed, rng=random.Random(seed))
    root.mkdir(parents=True, exist_ok=True)
    for _ in range(n_files):
        corpus.new_note()
    return corpus


def edit_burst(corpus: Corpus, n: int) -> list[str]:
    """``n`` editing actions in a row: mostly rewrites, some creations, deletions and
    renames (into other directories too). Returns a log of what was done."""
    rng = corpus.rng
    done = []
    for k in range(n):
        roll = rng.random()
        existing = sorted(corpus.files)
        if roll < 0.15 or not existing:
            done.append("create " + corpus.new_note())
        elif roll < 0.25:
            rel = rng.choice(existing)
            corpus.delete(rel)
            done.append("delete " + rel)
        elif roll < 0.35:
            rel = rng.choice(existing)
            new_rel = f"moved{k % 3}/{Path(rel).stem}-r{corpus.counter}.org"
            corpus.counter += 1
            corpus.rename(rel, new_rel)
            done.append(f"rename {rel} {new_rel}")
        else:
            rel = rng.choice(existing)
            corpus.rewrite(rel)
            done.append("rewrite " + rel)
    return done


# --------------------------------------------------------------------------- snapshots


@dataclass
class IndexSnapshot:
    """What an index database holds, as sets keyed by paths and lines, never row ids."""

    files: frozenset  # (path, content hash, title, file node, problems JSON)
    headings: frozenset  # (path, start, end, level, title, node_id, own_id, content hash)
    chunks: frozenset  # (path, heading start, ordinal, text hash)
    links: Counter  # (path, heading start, src node, dst node) -> count
    embedded: frozenset  # text hashes that have an embeddings row and a vector
    problems: list[str]  # integrity violations; empty for a healthy index

    def content(self) -> dict:
        """Everything two equivalent indexes must agree on."""
        return {
            "files": self.files,
            "headings": self.headings,
            "chunks": self.chunks,
            "links": self.links,
            "embedded": self.embedded,
        }

    def diff(self, other: "IndexSnapshot", limit: int = 5) -> str:
        """A short human-readable difference, for assertion messages."""
        out = []
        for key, mine in self.content().items():
            theirs = other.content()[key]
            if mine != theirs:
                extra, missing = mine - theirs, theirs - mine
                out.append(f"{key}: {len(extra)} extra {sorted(extra)[:limit]}, {len(missing)} missing {sorted(missing)[:limit]}")
        return "\n".join(out) or "no difference"


def _one(conn, sql: str, *args):
    return conn.execute(sql, args).fetchone()[0]


def index_snapshot(db_path: Path, *, check_fts: bool = True) -> IndexSnapshot:
    """Read ``db_path`` (no process may be writing it). ``check_fts`` runs FTS5's own
    integrity check against the headings table, which needs a writable connection."""
    conn = connect(db_path, readonly=not check_fts)
    try:
        problems: list[str] = []
        ok = _one(conn, "PRAGMA integrity_check")
        if ok != "ok":
            problems.append(f"integrity_check: {ok}")
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            problems.append(f"foreign key violations: {len(fk)}")
        for what, sql in (
            ("duplicate file paths", "SELECT path FROM files GROUP BY path HAVING count(*) > 1"),
            ("duplicate headings", "SELECT file, start_line FROM headings GROUP BY file, start_line HAVING count(*) > 1"),
            ("duplicate chunks", "SELECT heading, ordinal FROM chunks GROUP BY heading, ordinal HAVING count(*) > 1"),
            ("duplicate embeddings", "SELECT hash FROM embeddings GROUP BY hash HAVING count(*) > 1"),
            ("headings without file", "SELECT id FROM headings WHERE file NOT IN (SELECT id FROM files)"),
            ("chunks without heading", "SELECT id FROM chunks WHERE heading NOT IN (SELECT id FROM headings)"),
            ("links without heading", "SELECT rowid FROM links WHERE heading NOT IN (SELECT id FROM headings)"),
            ("embeddings no chunk uses", "SELECT hash FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)"),
        ):
            rows = conn.execute(sql).fetchall()
            if rows:
                problems.append(f"{what}: {len(rows)} e.g. {tuple(rows[0])}")
        has_vec = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_embeddings'").fetchone() is not None
        if has_vec:
            orphans = _one(conn, "SELECT count(*) FROM vec_embeddings WHERE rowid NOT IN (SELECT id FROM embeddings)")
            missing = _one(conn, "SELECT count(*) FROM embeddings WHERE id NOT IN (SELECT rowid FROM vec_embeddings)")
            if orphans:
                problems.append(f"orphan vectors (no embeddings row): {orphans}")
            if missing:
                problems.append(f"embeddings rows without a vector: {missing}")
            embedded = frozenset(
                r[0] for r in conn.execute("SELECT e.hash FROM embeddings e JOIN vec_embeddings v ON v.rowid = e.id")
            )
        else:
            if _one(conn, "SELECT count(*) FROM embeddings"):
                problems.append("embeddings rows but no vector table")
            embedded = frozenset()
        if check_fts:
            try:
                conn.execute("INSERT INTO headings_fts(headings_fts, rank) VALUES ('integrity-check', 1)")
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                problems.append(f"FTS index out of step with headings: {exc}")
        files = frozenset(
            tuple(r) for r in conn.execute("SELECT path, hash, title, file_node, problems FROM files")
        )
        headings = frozenset(
            tuple(r)
            for r in conn.execute(
                "SELECT f.path, h.start_line, h.end_line, h.level, h.title, h.node_id, h.own_id, h.hash"
                " FROM headings h JOIN files f ON f.id = h.file"
            )
        )
        chunks = frozenset(
            tuple(r)
            for r in conn.execute(
                "SELECT f.path, h.start_line, c.ordinal, c.hash FROM chunks c"
                " JOIN headings h ON h.id = c.heading JOIN files f ON f.id = h.file"
            )
        )
        links = Counter(
            tuple(r)
            for r in conn.execute(
                "SELECT f.path, h.start_line, l.src_node, l.dst_node FROM links l"
                " JOIN headings h ON h.id = l.heading JOIN files f ON f.id = h.file"
            )
        )
        return IndexSnapshot(files, headings, chunks, links, embedded, problems)
    finally:
        conn.close()


async def clean_snapshot(settings: Settings, *, embed: bool = True) -> IndexSnapshot:
    """Index ``settings.roam_dir`` from scratch into ``settings.db_path`` (which must not
    exist yet) with an in-process OracleIndex, and snapshot it."""
    assert not Path(settings.db_path).exists(), "the clean index needs a fresh database"
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        if embed:
            await index.embed_pending()
    finally:
        await index.close()
    return index_snapshot(Path(settings.db_path))


def db_bytes(path: Path | str) -> bytes:
    """Every byte SQLite keeps for a database: the file, its WAL, journal and shm."""
    data = b""
    for suffix in ("", "-wal", "-journal", "-shm"):
        p = f"{path}{suffix}"
        if os.path.exists(p):
            with open(p, "rb") as fh:
                data += fh.read()
    return data


def emacs_save(path, text: str, *, precious: bool = False) -> None:
    """Write ``text`` to ``path`` the way Emacs 28 does: lock file, auto-save, a backup
    rename on first save (or a temp file renamed over it with file-precious-flag)."""
    lock = path.with_name(".#" + path.name)
    autosave = path.with_name("#" + path.name + "#")
    os.symlink("user@host.1234:1700000000", lock)
    autosave.write_text(text[: len(text) // 2])
    if precious:
        tmp = path.with_name("tmpa1b2c3")
        tmp.write_text(text)
        os.replace(tmp, path)
    else:
        if path.exists():
            os.replace(path, path.with_name(path.name + "~"))
        path.write_text(text)
    autosave.unlink()
    lock.unlink()


def unreadable_to_the_indexer(monkeypatch, name: str) -> None:
    """The indexer's reads of every note named ``name`` fail with "Permission denied", as
    a note made unreadable does for a daemon not run as root, until ``monkeypatch`` is
    undone."""
    from arcology_oracle.index import indexer

    real_read = indexer._read_regular_file

    def read(real_root, path):
        if path.name == name:
            raise PermissionError(13, "Permission denied")
        return real_read(real_root, path)

    monkeypatch.setattr(indexer, "_read_regular_file", read)
