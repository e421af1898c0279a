"""The import graph of the package, read with `ast` from the source tree (ARCHITECTURE.md,
"Layers"): the language side imports nothing from the runtime, and no module imports itself
back through others, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"schedc.dsl": ROOT / "dsl", "schedc.runtime": ROOT / "runtime",
            "schedc.grammar": ROOT / "grammar"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every schedc module ``name`` imports (anywhere in the file), resolved to a module: an
    imported name that is a submodule counts as that submodule, else as its package."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{base}"
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in MODULES and t != name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_source_tree_is_found() -> None:
    assert "schedc.dsl.ir" in GRAPH and "schedc.runtime.engine.simulator" in GRAPH


@pytest.mark.parametrize("name", sorted(n for n in GRAPH if n.startswith("schedc.dsl")))
def test_the_language_side_imports_nothing_from_the_runtime(name: str) -> None:
    assert not {m for m in GRAPH[name] if m.startswith("schedc.runtime")}


def _cycle() -> list[str] | None:
    """One import cycle (as a path that ends where it starts), or None."""
    colour: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        path.append(node)
        for nxt in sorted(GRAPH[node]):
            if colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in colour and (found := visit(nxt)):
                return found
        path.pop()
        colour[node] = 2
        return None

    for node in sorted(GRAPH):
        if node not in colour and (found := visit(node)):
            return found
    return None


def test_no_import_cycle() -> None:
    assert _cycle() is None, " -> ".join(_cycle() or [])


def test_a_cycle_is_found_when_there_is_one() -> None:
    """The search itself: on a graph with a cycle it names it."""
    saved = dict(GRAPH)
    try:
        GRAPH["schedc.dsl.ir"] = GRAPH["schedc.dsl.ir"] | {"schedc.dsl.api"}
        assert _cycle() is not None
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


# --- rooms: the folders of the runtime, and what each may import --------------------------

# The runtime's rooms from the bottom up (ARCHITECTURE.md, "Layers"): the job model, the
# workloads, the engine, the results, the façade `run`, the tools on top of runs, the CLI.
# A top-level module of runtime/ is a room of its own; `tools/` is one room per tool.
BASE = {"runtime.version", "runtime.speedup", "runtime.gc_paused", "runtime.atomicio"}
MODEL = BASE | {"runtime.jobs", "dsl"}
ALLOWED: dict[str, set[str]] = {
    "grammar": set(),
    "dsl": {"grammar"},
    **{room: set() for room in BASE},
    "runtime.jobs": {"runtime.speedup"},
    "runtime.workloads": MODEL,
    "runtime.engine": MODEL | {"runtime.workloads"},
    "runtime.results": MODEL | {"runtime.workloads", "runtime.engine"},
    "runtime.run_warnings": MODEL | {"runtime.workloads"},
    "runtime.replay": MODEL | {"runtime.workloads", "runtime.engine"},
    "runtime.run": MODEL | {"runtime.workloads", "runtime.engine", "runtime.results",
                            "runtime.run_warnings"},
    "runtime.outputs": MODEL | {"runtime.run"},
    "runtime.tools": MODEL | {"runtime.workloads", "runtime.engine", "runtime.results",
                              "runtime.run"},
    "runtime": {"runtime.run"},  # the package's own __init__: the library's entry point
}
TOP = {"cli"}  # may import every room


def room(module: str) -> str:
    parts = module.split(".")[1:]
    if parts[0] != "runtime":
        return parts[0]
    if len(parts) == 1:
        return "runtime"
    return "runtime." + parts[1]


def test_every_room_has_a_contract() -> None:
    rooms = {room(m) for m in GRAPH}
    assert rooms - {f"runtime.{t}" for t in TOP} <= set(ALLOWED), \
        f"rooms without a row in ALLOWED: {sorted(rooms - set(ALLOWED))}"


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_a_module_imports_only_the_rooms_below_it(name: str) -> None:
    mine = room(name)
    if mine.removeprefix("runtime.") in TOP:
        return
    tool = name.split(".")[3] if mine == "runtime.tools" and len(name.split(".")) > 3 else None
    for target in GRAPH[name]:
        theirs = room(target)
        if theirs == mine:
            # a tool is its own room: one tool does not import another
            other = target.split(".")[3] if theirs == "runtime.tools" else tool
            assert other == tool, f"{name} imports {target}: tools stay apart"
            continue
        assert theirs in ALLOWED[mine], f"{name} ({mine}) imports {target} ({theirs})"
