"""Wildcard expressions and the chain search the contracts are built on."""

from __future__ import annotations

import pytest

from mir.importlinter.domain.expressions import ImportExpression, ModuleExpression
from mir.importlinter.domain.graph import ImportGraph

MODULES = ["p", "p.qux", "p.a", "p.a.qux", "p.a.b", "p.a.b.qux", "p.a.b.c"]


def graph_of(*imports: tuple[str, str], modules: list[str] = MODULES) -> ImportGraph:
    graph = ImportGraph()
    for module in modules:
        graph.add_module(module)
    for line, (importer, imported) in enumerate(imports, start=1):
        graph.add_import(importer, imported, line)
    return graph


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # the same answers grimp's find_matching_modules gives for this module set
        ("p.**", ["p.a", "p.a.b", "p.a.b.c", "p.a.b.qux", "p.a.qux", "p.qux"]),
        ("p.*", ["p.a", "p.qux"]),
        ("p.**.qux", ["p.a.b.qux", "p.a.qux"]),
        ("p.*.qux", ["p.a.qux"]),
        ("**.qux", ["p.a.b.qux", "p.a.qux", "p.qux"]),
        ("*.qux", ["p.qux"]),
        ("p.*.*", ["p.a.b", "p.a.qux"]),
        ("p.a", ["p.a"]),
        ("p.missing", []),
    ],
)
def test_module_expressions_match_like_grimp(expression: str, expected: list[str]) -> None:
    graph = graph_of()
    assert sorted(graph.find_matching_modules(ModuleExpression.parse(expression))) == expected


def test_import_expressions_match_both_ends() -> None:
    graph = graph_of(("p.a", "p.qux"), ("p.a.b", "p.qux"), ("p.a.b", "p.a.qux"))
    expression = ImportExpression.parse("p.a.** -> p.*")
    assert graph.find_matching_imports(expression) == [("p.a.b", "p.qux")]
    assert graph.find_matching_imports(ImportExpression.parse("p.a -> p.qux")) == [("p.a", "p.qux")]


def test_shortest_chain_prefers_fewest_links_and_is_deterministic() -> None:
    graph = graph_of(
        ("p.a", "p.a.b"), ("p.a.b", "p.a.b.c"), ("p.a.b.c", "p.qux"), ("p.a", "p.a.qux"),
        ("p.a.qux", "p.qux"),
    )  # fmt: skip
    assert graph.find_shortest_chain({"p.a"}, {"p.qux"}) == ("p.a", "p.a.qux", "p.qux")
    # excluding a module forces the longer way round
    assert graph.find_shortest_chain({"p.a"}, {"p.qux"}, {"p.a.qux"}) == (
        "p.a", "p.a.b", "p.a.b.c", "p.qux",
    )  # fmt: skip
    assert graph.find_shortest_chain({"p.a"}, {"p.qux"}, {"p.a.qux", "p.a.b"}) is None
    assert graph.find_shortest_chain({"p.qux"}, {"p.a"}) is None


def test_chains_start_from_any_source_and_end_at_any_target() -> None:
    graph = graph_of(("p.a.b.c", "p.qux"))
    assert graph.find_shortest_chain(graph.with_descendants("p.a"), {"p", "p.qux"}) == (
        "p.a.b.c", "p.qux",
    )  # fmt: skip


def test_copies_are_independent_and_lines_are_kept() -> None:
    graph = graph_of(("p.a", "p.qux"))
    graph.add_import("p.a", "p.qux", 9)
    clone = graph.copy()
    clone.remove_import("p.a", "p.qux")
    assert graph.lines("p.a", "p.qux") == [1, 9]
    assert clone.find_shortest_chain({"p.a"}, {"p.qux"}) is None


def test_children_and_descendants_skip_squashed_externals() -> None:
    graph = graph_of()
    graph.add_module("requests", squashed=True)
    assert graph.find_children("p") == {"p.a", "p.qux"}
    assert graph.find_descendants("p.a.b") == {"p.a.b.c", "p.a.b.qux"}
    assert graph.find_descendants("requests") == set()


def test_copies_share_nothing_they_change() -> None:
    graph = ImportGraph()
    graph.add_import("app.a", "app.b", 1)
    graph.add_import("app.a", "app.c", 2)
    graph.add_import("app.b", "app.c", 3)
    first, second = graph.copy(), graph.copy()
    first.remove_import("app.a", "app.b")
    second.add_import("app.a", "app.b", 9)
    graph.add_import("app.b", "app.c", 4)
    assert sorted(first.direct_imports()) == [("app.a", "app.c"), ("app.b", "app.c")]
    assert second.lines("app.a", "app.b") == [1, 9] and second.lines("app.b", "app.c") == [3]
    assert graph.lines("app.a", "app.b") == [1] and graph.lines("app.b", "app.c") == [3, 4]
    assert first.find_descendants("app") == {"app.a", "app.b", "app.c"}
    first.add_module("app.d")  # a new module: this copy's hierarchy only
    assert "app.d" in first.find_children("app") and "app.d" not in graph.find_children("app")
