"""Contract checks on hand-built graphs: the semantics that decide kept or broken."""

from __future__ import annotations

import re

import pytest

from mir.importlinter.domain.checks import check_contract
from mir.importlinter.domain.contracts import Session
from mir.importlinter.domain.graph import ImportGraph
from mir.importlinter.domain.options import parse_contract
from mir.importlinter.domain.verdicts import ContractCheckError

SESSION = Session(root_packages=("app",))
EXTERNALS = Session(root_packages=("app",), include_external_packages=True)


def graph_of(*imports: str, modules: tuple[str, ...] = ()) -> ImportGraph:
    """``"a -> b"`` strings; every module named (and its ancestors) exists."""
    graph = ImportGraph()
    names = set(modules)
    for text in imports:
        names.update(part.strip() for part in text.split("->"))
    for name in sorted(names):
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            graph.add_module(".".join(parts[:end]))
    for line, text in enumerate(imports, start=1):
        importer, imported = (part.strip() for part in text.split("->"))
        graph.add_import(importer, imported, line)
    return graph


def contract(kind: str, **options: str | list[str]):
    return parse_contract({"name": "C", "type": kind, **options})


def pairs(verdict) -> set[tuple[str, str]]:
    return {(v.importer, v.imported) for v in verdict.violations}


# --------------------------------------------------------------------------- layers
def test_a_chain_through_another_layer_is_two_violations_not_three() -> None:
    graph = graph_of("app.low -> app.mid", "app.mid -> app.high")
    layers = contract("layers", layers=["app.high", "app.mid", "app.low"])

    verdict = check_contract(layers, graph, SESSION)

    assert pairs(verdict) == {("app.low", "app.mid"), ("app.mid", "app.high")}


def test_a_chain_through_a_non_layer_module_counts_and_is_reported_whole() -> None:
    graph = graph_of("app.low.x -> app.util", "app.util -> app.high.y")
    layers = contract("layers", layers=["app.high", "app.low"])

    [violation] = check_contract(layers, graph, SESSION).violations

    assert (violation.importer, violation.imported) == ("app.low", "app.high")
    assert [(link.importer, link.imported, link.lines) for link in violation.chain] == [
        ("app.low.x", "app.util", (1,)),
        ("app.util", "app.high.y", (2,)),
    ]


def test_another_containers_layers_are_ordinary_modules() -> None:
    # one.low -> two.high is legal (different containers), two.high -> one.high too,
    # but together they link one.low to one.high.
    graph = graph_of(
        "app.one.low -> app.two.high", "app.two.high -> app.one.high", modules=("app.two.low",)
    )
    layers = contract("layers", layers=["high", "low"], containers=["app.one", "app.two"])

    assert pairs(check_contract(layers, graph, SESSION)) == {("app.one.low", "app.one.high")}


def test_independent_siblings_and_joined_siblings() -> None:
    graph = graph_of("app.a -> app.b")
    independent = contract("layers", layers=["app.a | app.b"])
    joined = contract("layers", layers=["app.a : app.b"])

    assert pairs(check_contract(independent, graph, SESSION)) == {("app.a", "app.b")}
    assert check_contract(joined, graph, SESSION).kept


def test_missing_layers_error_unless_optional() -> None:
    graph = graph_of("app.a -> app.b")
    with pytest.raises(ContractCheckError, match=re.escape("Missing layer 'app.c'")):
        check_contract(contract("layers", layers=["app.a", "app.c"]), graph, SESSION)
    optional = contract("layers", layers=["app.b", "(app.c)", "app.a"])
    assert not check_contract(optional, graph, SESSION).kept  # checked, not skipped
    with pytest.raises(ContractCheckError, match=re.escape("Missing layer in container 'app.x'")):
        check_contract(contract("layers", layers=["a"], containers="app.x"), graph, SESSION)


def test_a_wildcard_container_matching_nothing_checks_nothing() -> None:
    graph = graph_of("app.a -> app.b")
    assert check_contract(
        contract("layers", layers=["b", "a"], containers="app.*.*"), graph, SESSION
    ).kept


def test_exhaustive_reports_each_undeclared_child() -> None:
    graph = graph_of(modules=("app.c.domain", "app.c.extra", "app.c.tests"))
    layers = contract(
        "layers", layers=["domain"], containers="app.c", exhaustive="true",
        exhaustive_ignores="tests",
    )  # fmt: skip

    verdict = check_contract(layers, graph, SESSION)

    assert [v.importer for v in verdict.violations] == ["app.c.extra"]
    assert verdict.violations[0].chain == ()


# --------------------------------------------------------------------------- forbidden
def test_forbidden_indirect_and_allow_indirect() -> None:
    graph = graph_of("app.a -> app.mid", "app.mid -> app.b.x")
    assert not check_contract(
        contract("forbidden", source_modules="app.a", forbidden_modules="app.b"), graph, SESSION
    ).kept
    assert check_contract(
        contract(
            "forbidden", source_modules="app.a", forbidden_modules="app.b",
            allow_indirect_imports="true",
        ),
        graph,
        SESSION,
    ).kept  # fmt: skip


def test_forbidden_as_packages_false_looks_at_the_modules_themselves() -> None:
    graph = graph_of("app.a.x -> app.b.y")
    as_modules = contract(
        "forbidden", source_modules="app.a", forbidden_modules="app.b", as_packages="false"
    )
    assert check_contract(as_modules, graph, SESSION).kept
    assert not check_contract(
        contract("forbidden", source_modules="app.a", forbidden_modules="app.b"), graph, SESSION
    ).kept


def test_forbidden_skips_overlapping_pairs() -> None:
    graph = graph_of("app.a -> app.b", "app.b -> app.a")
    overlapping = contract("forbidden", source_modules="app.*", forbidden_modules="app.a")
    assert pairs(check_contract(overlapping, graph, SESSION)) == {("app.b", "app.a")}


def test_forbidden_external_packages() -> None:
    graph = graph_of("app.a -> app.b")
    graph.add_module("requests", squashed=True)
    graph.add_import("app.b", "requests", 3)
    forbid = contract("forbidden", source_modules="app.a", forbidden_modules=["requests", "yaml"])

    assert pairs(check_contract(forbid, graph, EXTERNALS)) == {("app.a", "requests")}
    with pytest.raises(ContractCheckError, match="include_external_packages=True"):
        check_contract(forbid, graph, SESSION)
    with pytest.raises(ContractCheckError, match="subpackages of external packages"):
        check_contract(
            contract("forbidden", source_modules="app.a", forbidden_modules="requests.api"),
            graph,
            EXTERNALS,
        )


def test_forbidden_missing_internal_module_is_an_error() -> None:
    with pytest.raises(ContractCheckError, match=re.escape("Module 'app.ghost' does not exist.")):
        check_contract(
            contract("forbidden", source_modules="app.a", forbidden_modules="app.ghost"),
            graph_of("app.a -> app.b"),
            SESSION,
        )


# --------------------------------------------------------------------------- ignore_imports
def test_ignore_imports_wildcards_remove_edges_and_unmatched_ones_alert() -> None:
    graph = graph_of("app.a.x -> app.b", "app.a.y.z -> app.b")
    base = {"source_modules": "app.a", "forbidden_modules": "app.b"}

    one_level = contract("forbidden", **base, ignore_imports="app.a.* -> app.b")
    assert pairs(check_contract(one_level, graph, SESSION)) == {("app.a", "app.b")}
    all_levels = contract("forbidden", **base, ignore_imports="app.a.** -> app.b")
    verdict = check_contract(all_levels, graph, SESSION)
    assert verdict.kept and verdict.ignored_import_count == 2

    stale = ["app.a.** -> app.b", "app.c -> app.b"]
    with pytest.raises(
        ContractCheckError, match=re.escape("No matches for ignored import app.c -> app.b.")
    ):
        check_contract(contract("forbidden", **base, ignore_imports=stale), graph, SESSION)
    warned = contract(
        "forbidden", **base, ignore_imports=stale, unmatched_ignore_imports_alerting="warn"
    )
    assert check_contract(warned, graph, SESSION).warnings == (
        "No matches for ignored import app.c -> app.b.",
    )
    quiet = contract(
        "forbidden", **base, ignore_imports=stale, unmatched_ignore_imports_alerting="none"
    )
    assert check_contract(quiet, graph, SESSION).warnings == ()


def test_ignoring_leaves_the_shared_graph_alone() -> None:
    graph = graph_of("app.a -> app.b")
    ignoring = contract(
        "forbidden",
        source_modules="app.a",
        forbidden_modules="app.b",
        ignore_imports="app.a -> app.b",
    )
    assert check_contract(ignoring, graph, SESSION).kept
    assert graph.lines("app.a", "app.b") == [1]


# --------------------------------------------------------------------------- independence
def test_independence_through_a_third_listed_module_blames_its_pairs() -> None:
    graph = graph_of("app.a -> app.c", "app.c -> app.b")
    independence = contract("independence", modules=["app.a", "app.b", "app.c"])
    assert pairs(check_contract(independence, graph, SESSION)) == {
        ("app.a", "app.c"),
        ("app.c", "app.b"),
    }
    two = contract("independence", modules=["app.a", "app.b"])
    assert pairs(check_contract(two, graph, SESSION)) == {("app.a", "app.b")}


# --------------------------------------------------------------------------- acyclic
def test_cycles_between_children_count_their_descendants() -> None:
    graph = graph_of("app.p.a.x -> app.p.b", "app.p.b.y -> app.p.a")
    verdict = check_contract(contract("acyclic_siblings", ancestors="app"), graph, SESSION)
    assert not verdict.kept
    assert "No cycles are allowed in app.p" in verdict.violations[0].message
    shallow = contract("acyclic_siblings", ancestors="app", depth="0")
    assert check_contract(shallow, graph, SESSION).kept
    skipping = contract("acyclic_siblings", ancestors="app", skip_descendants="app.p")
    assert check_contract(skipping, graph, SESSION).kept


def test_a_cycle_through_the_parent_is_not_a_sibling_cycle() -> None:
    acyclic = contract("acyclic_siblings", ancestors="app.p")
    through_parent = graph_of("app.p.a -> app.p", "app.p -> app.p.b", "app.p.b -> app.p.a")
    assert check_contract(acyclic, through_parent, SESSION).kept
    between_siblings = graph_of("app.p.a -> app.p.b", "app.p.b -> app.p.a")
    assert not check_contract(acyclic, between_siblings, SESSION).kept


def test_acyclic_ancestor_errors() -> None:
    graph = graph_of("app.a -> app.b")
    with pytest.raises(ContractCheckError, match="did not match any modules"):
        check_contract(contract("acyclic_siblings", ancestors="app.*.*"), graph, SESSION)
    with pytest.raises(
        ContractCheckError, match=re.escape("Cannot skip 'app' as it is also an ancestor.")
    ):
        check_contract(
            contract("acyclic_siblings", ancestors="app", skip_descendants="app"), graph, SESSION
        )


# --------------------------------------------------------------------------- direct imports
def test_protected_allows_listed_importers_and_the_package_itself() -> None:
    graph = graph_of(
        "app.ok.x -> app.vault.api", "app.vault.a -> app.vault.b", "app.x -> app.vault"
    )
    protected = contract("protected", protected_modules="app.vault", allowed_importers="app.ok")

    assert pairs(check_contract(protected, graph, SESSION)) == {("app.x", "app.vault")}
    # only direct imports count: app.y reaching the vault through app.x is fine
    graph.add_import("app.y", "app.x", 1)
    assert pairs(check_contract(protected, graph, SESSION)) == {("app.x", "app.vault")}


def test_protected_missing_module_is_an_error() -> None:
    protected = contract("protected", protected_modules="app.ghost", allowed_importers="app.a")
    with pytest.raises(ContractCheckError, match=re.escape('"app.ghost" not present')):
        check_contract(protected, graph_of("app.a -> app.b"), SESSION)


def test_private_modules_are_private_to_their_parent_package() -> None:
    graph = graph_of(
        "app.pkg.a -> app.pkg._priv",  # sibling: fine
        "app.pkg.sub.b -> app.pkg._priv.deep",  # inside the parent package: fine
        "app.other -> app.pkg._priv.deep",  # outside: broken
        "app.other -> app.pkg.__main__",  # dunder names are not private
    )
    everywhere = contract("private_modules")
    assert pairs(check_contract(everywhere, graph, SESSION)) == {
        ("app.other", "app.pkg._priv.deep")
    }
    elsewhere = contract("private_modules", packages_with_private_modules="app.other")
    assert check_contract(elsewhere, graph, SESSION).kept
