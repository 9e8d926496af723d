"""Applied migrations never change.

A database records each migration it has had by name and never runs it again, so an
edit to an applied migration reaches only fresh databases: the user's, migrated before,
keep the old schema while the code assumes the new one. (It happened once in review: a
search-and-replace meant for m015 edited m013 too.) Each migration's code is pinned here
by a hash of its syntax tree, the module constants it reads included: its docstring,
Python comments and layout may change, its SQL (comments in it too) may not.

When this fails: put the old code back and add a new migration. Pin a new migration by
adding its line (the failure message prints it).
"""

from __future__ import annotations

import ast
import hashlib
import inspect

from arcology_oracle.store import migration_registry, migrations_m001, migrations_m011, migrations_m021, migrations_m031
from arcology_oracle.store.migrations import MIGRATIONS

# Where migrations are written, in order, and the constants they may read.
MODULES = (migrations_m001, migrations_m011, migrations_m021, migrations_m031)
CONSTANTS = {name: value for name, value in vars(migration_registry).items() if isinstance(value, str) and name.isupper()}

PINNED = {
    "m001_initial": "dcf959c5f547ddab",
    "m002_private_deletes": "7e4cb64ec4c085a6",
    "m003_fts_inserts_per_transaction": "88ce61dbb5bb27c0",
    "m004_heading_date_sources": "d54eff35b7dc40c1",
    "m005_fts_context_and_cjk": "30f6418410f33007",
    "m006_link_rejections": "9dadd86a86e27415",
    "m007_node_labels": "4faec2646cc6144f",
    "m008_fts_exact_words": "a71c85383f0bcd09",
    "m009_reread_for_drawer_case": "dbfbe281feddd8fd",
    "m010_reread_oracle_citations": "7a5574ffc6ea7623",
    "m011_dialogue_turns": "8638c7edf5811498",
    "m012_reread_conversations": "c5ac2fe217f9b545",
    "m013_reread_dialogue": "00a88010d737a2bb",
    "m014_role_index": "674ee2e91ba74fa6",
    "m015_turn_bigrams": "d62b91a6f0d46aa2",
    "m016_reread_for_drawer_values": "dbfbe281feddd8fd",
    "m017_turn_dates": "65fcd73c00cce938",
    "m018_setup_files": "1b885ab1871a7ffe",
    "m019_reread_for_setup_files": "dbfbe281feddd8fd",
    "m020_oracle_words": "d68466d865652f59",
    "m021_reread_gptel_bounds": "2bb7b83e3466638e",
    "m022_reread_turns_past_midnight": "17992f676af8c1e2",
    "m023_reread_org_ai_chats": "3d1f7e7733e1385b",
    "m024_reread_oracle_titles": "b26300f1cd041cd8",
    "m025_reread_turns_a_few_minutes_back": "17992f676af8c1e2",
    "m026_reread_org_ai_blocks_as_org_reads_them": "3d1f7e7733e1385b",
    "m027_reread_gptel_state_without_bounds": "7d003dc82765350a",
    "m028_reread_turns_hours_back": "17992f676af8c1e2",
    "m029_reread_replies_in_the_users_headings": "7bd04d057b557fb7",
    "m030_reread_ellama_sessions": "de53fd128a1da1bf",
    "m031_forget_private_files": "faeb20daeff6a5a8",
    "m032_reread_links_in_replies": "6706e4b3a26a2306",
    "m033_reread_for_rejections_of_private_nodes": "ba55833ebd9bc23c",
    "m034_reparse_for_rejections_of_private_nodes": "3fd40a86da816c3a",
    "m035_chunk_hashes_cover_their_headings": "b544c013193ed377",
}


def migration_hashes(source: str, constants: dict[str, str]) -> dict[str, str]:
    """Each ``@migration`` function of a module's ``source``, in order: a hash of its code
    without its docstring, decorators, comments or layout, followed by the values of the
    ``constants`` it names (the tokenizers). Read from the source, so that any past
    version of a module can be hashed without importing it."""
    module = ast.parse(source)
    out = {}
    for func in module.body:
        if not (isinstance(func, ast.FunctionDef) and any(getattr(d, "id", None) == "migration" for d in func.decorator_list)):
            continue
        body = func.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        digest = hashlib.sha256()
        for statement in body:
            digest.update(ast.dump(statement, include_attributes=False).encode())
        for name in sorted({node.id for node in ast.walk(func) if isinstance(node, ast.Name)} & constants.keys()):
            digest.update(f"{name}={constants[name]}".encode())
        out[func.name] = digest.hexdigest()[:16]
    return out


def test_every_migration_is_pinned_and_none_applied_has_changed():
    hashes = {}
    for module in MODULES:
        hashes.update(migration_hashes(inspect.getsource(module), CONSTANTS))
    assert list(hashes) == [fn.__name__ for fn in MIGRATIONS], "every migration is read from MODULES, in order"
    unpinned = [f'    "{name}": "{h}",' for name, h in hashes.items() if name not in PINNED]
    assert not unpinned, "a new migration: pin it by adding to PINNED\n" + "\n".join(unpinned)
    changed = [name for name, h in hashes.items() if PINNED[name] != h]
    assert not changed, f"applied migrations changed: {changed}; put them back and add a new migration"
    assert list(hashes) == list(PINNED), "migrations were removed or reordered"


EXAMPLE = '''
@migration
def m001_example(conn) -> None:
    """A docstring."""
    conn.executescript(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZE}');")
'''


def test_the_hash_sees_code_and_constants_but_not_docstrings_or_comments():
    constants = {"FTS_TOKENIZE": "porter unicode61"}
    first = migration_hashes(EXAMPLE, constants)["m001_example"]
    other_docstring = EXAMPLE.replace('"""A docstring."""', '"""Another."""\n    # a comment')
    assert migration_hashes(other_docstring, constants)["m001_example"] == first
    assert migration_hashes(EXAMPLE.replace("fts5(x,", "fts5(y,"), constants)["m001_example"] != first
    assert migration_hashes(EXAMPLE, {"FTS_TOKENIZE": "unicode61"})["m001_example"] != first
