"""The ``tokstream`` package has no import cycle (STYLE.md: imports point one way).

Every module under ``tokstream/`` is parsed with ``ast`` (nothing is imported), and each
import of another ``tokstream`` module becomes an edge of a graph
(``helpers.module_imports``):

- module-level and function-level imports alike (a function-level import is a
  dependency too, only a later one); the body of ``if TYPE_CHECKING:`` is skipped
  (it never runs; its ``else:`` does);
- relative imports are resolved against the importing module's package;
- ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
  ``pkg`` itself (its ``__init__``); ``import a.b`` is an edge to ``a.b``;
- ``importlib.import_module`` with a literal name (or ``f"{__package__}.x"``) counts;
- a package's ``__init__`` importing its own submodules is an ordinary edge, so a
  submodule that imports its parent package's ``__init__`` closes a cycle.

A failure lists one cycle through each module that is on one, as ``a -> b -> a``,
with the file and line of each import.
"""

from __future__ import annotations

import ast

import pytest
from helpers import REPO, is_type_checking, module_imports, package_modules

Graph = dict[str, dict[str, int]]


def import_graph() -> Graph:
    """module -> {imported module: line of its first import}; no self-loops."""
    graph: Graph = {}
    for module in package_modules():
        edges: dict[str, int] = {}
        for imp in module_imports(module, type_checking=False):
            if imp.module != module:
                edges.setdefault(imp.module, imp.line)
        graph[module] = edges
    return graph


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph: Graph, start: str, within: set[str]) -> list[str]:
    """The shortest cycle through ``start`` inside ``within`` (breadth first), closed:
    ``[start, ..., start]``."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if w in within and w not in parents:
                    parents[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{start} is on no cycle")


def cycles(graph: Graph) -> list[list[str]]:
    """One shortest cycle through each module that is on a cycle and not yet on a
    listed one."""
    found = []
    for component in strongly_connected(graph):
        covered: set[str] = set()
        for start in component:
            if start not in covered:
                cycle = shortest_cycle(graph, start, set(component))
                covered.update(cycle)
                found.append(cycle)
    return found


def describe(graph: Graph, cycle: list[str]) -> str:
    modules = package_modules()
    where = "; ".join(f"{modules[a].relative_to(REPO)}:{graph[a][b]} imports {b}" for a, b in zip(cycle, cycle[1:]))
    return f"{' -> '.join(cycle)}\n      ({where})"


def test_graph_sees_the_package() -> None:
    graph = import_graph()
    assert {"tokstream", "tokstream.tokenizer", "tokstream.stream.decoder"} <= set(graph)
    assert "tokstream.tokenizer" in graph["tokstream"]
    # `from . import x` in a package resolves to its submodule x.
    assert "tokstream.normalizers.base" in graph["tokstream.normalizers"]


def test_type_checking_imports_are_not_edges() -> None:
    for module, path in package_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = {
            node.lineno
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and is_type_checking(block.test)
            for stmt in block.body
            for node in ast.walk(stmt)
            if isinstance(node, (ast.Import, ast.ImportFrom))
        }
        seen = {imp.line for imp in module_imports(module, type_checking=False)}
        assert not hidden & seen, (module, sorted(hidden & seen))


def test_cycle_finder_on_a_small_graph() -> None:
    graph: Graph = {"a": {"b": 1}, "b": {"c": 2, "a": 3}, "c": {"a": 4}, "d": {"a": 5}}
    assert cycles(graph) == [["a", "b", "a"], ["c", "a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycle() -> None:
    graph = import_graph()
    found = cycles(graph)
    if found:
        pytest.fail(
            f"{len(found)} import cycle(s) in tokstream/:\n" + "\n".join(f"  {describe(graph, c)}" for c in found),
            pytrace=False,
        )
