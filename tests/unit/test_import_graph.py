"""No import circle between mir's modules, imports inside functions counted.

The graph is computed from the AST of every module under ``mir/``: ``import a.b`` and
``from a import b`` at any depth (module level, in a function, under ``TYPE_CHECKING``),
relative imports resolved against the importing module's package, and ``from pkg import
mod`` an edge to the module ``pkg.mod`` when there is one (to ``pkg`` otherwise). A
package's ``__init__`` is the module ``pkg``; importing ``a.b.c`` is an edge to
``a.b.c`` only (not to its parent packages, which every import would otherwise reach).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

MIR = Path(__file__).resolve().parents[2] / "mir"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The mir modules ``name`` (the module whose AST is ``tree``) imports."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in modules else base)
    return {target for target in found if target in modules and target != name}


def import_graph(root: Path = MIR) -> dict[str, set[str]]:
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    modules = set(files)
    return {
        name: imported(
            ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", modules
        )
        for name, path in files.items()
    }


def circles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_no_import_circle_between_mir_modules():
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


def _graph_of(source: dict[str, str], tmp_path: Path) -> dict[str, set[str]]:
    root = tmp_path / "pkg"
    for name, text in source.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph(root)


def test_the_graph_counts_function_level_relative_and_module_imports(tmp_path: Path):
    graph = _graph_of(
        {
            "__init__.py": "",
            "a/__init__.py": "from pkg.a.b import thing\n",
            "a/b.py": "def f():\n    from . import c\n",
            "a/c.py": "import typing\nif typing.TYPE_CHECKING:\n    from ..d import x\n",
            "d.py": "import pkg.a.b\nfrom pkg.a import c, thing\n",
        },
        tmp_path,
    )
    assert graph["pkg.a"] == {"pkg.a.b"}
    assert graph["pkg.a.b"] == {"pkg.a.c"}  # inside a function, relative, a module
    assert graph["pkg.a.c"] == {"pkg.d"}  # relative two levels up, under TYPE_CHECKING
    assert graph["pkg.d"] == {"pkg.a.b", "pkg.a.c", "pkg.a"}  # `thing` is pkg.a's name
    assert circles(graph) == [frozenset({"pkg.a", "pkg.a.b", "pkg.a.c", "pkg.d"})]


def test_a_graph_without_circles_has_none(tmp_path: Path):
    graph = _graph_of({"__init__.py": "", "x.py": "from pkg import y\n", "y.py": ""}, tmp_path)
    assert graph == {"pkg": set(), "pkg.x": {"pkg.y"}, "pkg.y": set()}
    assert circles(graph) == []


def _reaches(graph: Mapping[str, Iterable[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        for target in graph.get(node, ()):
            if target == goal:
                return True
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return False


@given(st.dictionaries(st.integers(0, 7), st.sets(st.integers(0, 7), max_size=4), max_size=8))
def test_circles_are_exactly_the_modules_that_reach_each_other(edges):
    graph = {str(n): {str(t) for t in targets} for n, targets in edges.items()}
    found = circles(graph)
    nodes = set(graph) | {t for targets in graph.values() for t in targets}
    for a in nodes:
        for b in nodes:
            together = any(a in c and b in c for c in found)
            mutual = a != b and _reaches(graph, a, b) and _reaches(graph, b, a)
            assert together == mutual or a == b


@pytest.mark.parametrize("level", [1, 2])
def test_relative_import_from_a_package_init(tmp_path: Path, level: int):
    dots = "." * level
    graph = _graph_of(
        {"__init__.py": "", "m.py": "", "a/__init__.py": f"from {dots} import m\n"}, tmp_path
    )
    # `from . import m` in pkg/a/__init__ is pkg.a.m (absent); `from .. import m` is pkg.m
    assert graph["pkg.a"] == (set() if level == 1 else {"pkg.m"})
