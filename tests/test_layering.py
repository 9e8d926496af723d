"""The package's shape: layers import one way, no import cycles, no module over 400 lines
(nor any file of the Emacs package, elisp/arcology-oracle*.el).

Reads every module of ``daemon/arcology_oracle`` with :mod:`ast` (nothing is imported) and
checks each import, function-level ones included, against :data:`LAYERS`: the order in
which a note travels, org files -> notes -> store -> ollama -> index -> answers -> http ->
cli. A module may import its own layer and the layers before it, never a later one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "daemon" / "arcology_oracle"
ELISP = Path(__file__).resolve().parent.parent / "elisp"
NAME = "arcology_oracle"

# First dotted component below the package -> layer; lower imports nothing higher.
LAYERS: dict[str, int] = {
    "__init__": 0, "config": 0, "errors": 0, "org_tags": 0,
    "notes": 1,
    # Chat logs read into conversations (pure) and written as org files (writing.py): no store or index.
    "importers": 1,
    "store": 2,
    "ollama": 3,
    "index": 4,
    "answers": 5,
    "http": 6,
    # The MCP server answers over its own transports from the same routes as http/.
    "mcp_server": 6,
    "cli": 7, "cli_answers": 7, "cli_import": 7, "cli_index": 7, "cli_progress": 7, "__main__": 7,
}  # fmt: skip

MAX_LINES = 400
# Modules allowed over MAX_LINES, each with the reason; keep this empty where possible.
LONG_MODULES: dict[str, str] = {}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``name`` imports (``from . import x`` counted as module x)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    if name == "__init__":
        package = []
    found: set[str] = set()

    def add(dotted: str) -> None:
        # The longest known module that the dotted name starts with.
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in known:
                found.add(candidate)
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(NAME + "."):
                    add(alias.name[len(NAME) + 1 :])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else list(package)
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and (node.module == NAME or node.module.startswith(NAME + ".")):
                target = node.module[len(NAME) + 1 :]
            else:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                if full in known:
                    found.add(full)
                elif target:
                    add(target)
                else:
                    found.add("__init__")
    found.discard(name)
    return found


def layer_of(name: str) -> int:
    top = name.split(".")[0]
    if top not in LAYERS:
        pytest.fail(
            f"module {name} is in no layer: put it in the folder of its stage (notes, store, ollama, "
            "index, answers, http) or add its top-level name to LAYERS in tests/test_layering.py"
        )
    return LAYERS[top]


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def test_the_graph_sees_the_imports_it_checks():
    """The walker finds relative, absolute and function-level imports (else the other
    tests would pass on an empty graph)."""
    edges = graph()
    assert "store.index" in edges["store"]  # from .index import Store (package __init__)
    assert "answers.search" in edges["cli_answers"]  # a function-level import
    assert "store.vectors" in edges["store.search"]  # from . import vectors
    assert "index.service" in edges["index.live"]


def test_no_module_imports_a_later_layer():
    bad = [
        f"{name} (layer {layer_of(name)}) imports {dep} (layer {layer_of(dep)})"
        for name, deps in graph().items()
        for dep in sorted(deps)
        if layer_of(dep) > layer_of(name)
    ]
    assert bad == []


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}  # 1 visiting, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges[node]):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_modules_stay_short():
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert {name: n for name, n in long.items() if name not in LONG_MODULES} == {}
    stale = sorted(set(LONG_MODULES) - set(long))
    assert stale == [], f"no longer over {MAX_LINES} lines, drop from LONG_MODULES: {stale}"


def test_elisp_files_stay_short():
    """The Emacs package keeps the same limit: a file with one job, split where it grows."""
    files = sorted(ELISP.glob("arcology-oracle*.el"))
    assert len(files) > 1
    long = {p.name: n for p in files if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"Emacs Lisp files over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_every_module_says_its_job(name):
    tree = ast.parse(modules()[name].read_text(encoding="utf-8"))
    if name.endswith("__main__"):
        return
    assert ast.get_docstring(tree), f"{name} has no module docstring"
