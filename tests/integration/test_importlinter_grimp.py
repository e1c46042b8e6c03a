"""Randomised differential test of the graph semantics against grimp (import-linter's
engine), in-process: the same random graphs, the same questions, the same answers.

The fixture-based test (``test_importlinter_differential``) pins whole configs; this one
explores shapes nobody would think to write by hand (chains through other layers,
through other containers, through descendants, cycles through subpackages).
"""

from __future__ import annotations

import random
from itertools import pairwise

import grimp
import pytest

from mir.importlinter.domain.checks import _sibling_cycle
from mir.importlinter.domain.contracts import Layer, LayersContract, LayerTail, Session
from mir.importlinter.domain.expressions import ModuleExpression
from mir.importlinter.domain.graph import ImportGraph
from mir.importlinter.domain.layering import check_layers

TAILS = ["a", "b", "c", "d", "e"]


def random_graphs(seed: int) -> tuple[ImportGraph, grimp.ImportGraph, list[str]]:
    rng = random.Random(seed)
    modules = ["app"]
    for container in ("app.one", "app.two"):
        modules.append(container)
        for tail in TAILS:
            if rng.random() < 0.85:
                modules.append(f"{container}.{tail}")
                modules += [f"{container}.{tail}.{n}" for n in ("x", "y") if rng.random() < 0.4]
    modules += ["app.shared", "app.shared.util"]
    ours, theirs = ImportGraph(), grimp.ImportGraph()
    for module in modules:
        ours.add_module(module)
        theirs.add_module(module)
    for _ in range(rng.randint(3, 14)):
        importer, imported = rng.sample(modules, 2)
        ours.add_import(importer, imported, 1)
        theirs.add_import(importer=importer, imported=imported, line_number=1, line_contents="")
    return ours, theirs, modules


def random_layers(seed: int) -> list[tuple[list[str], bool]]:
    rng = random.Random(seed * 7 + 1)
    tails = rng.sample(TAILS, rng.randint(2, 5))
    levels: list[tuple[list[str], bool]] = []
    while tails:
        size = rng.choice([1, 1, 2])
        levels.append((tails[:size], rng.random() < 0.5))
        tails = tails[size:]
    return levels


@pytest.mark.parametrize("seed", range(150))
def test_illegal_layer_pairs_equal_grimps(seed: int) -> None:
    ours, theirs, _ = random_graphs(seed)
    levels = random_layers(seed)
    containers = {"app.one", "app.two"}

    expected = theirs.find_illegal_dependencies_for_layers(
        layers=[grimp.Layer(*tails, independent=independent) for tails, independent in levels],
        containers=containers,
    )
    contract = LayersContract(
        name="random",
        layers=tuple(
            Layer(tails=tuple(LayerTail(name=t, optional=True) for t in tails), independent=i)
            for tails, i in levels
        ),
        containers=tuple(ModuleExpression.parse(c) for c in sorted(containers)),
    )
    verdict = check_layers(contract, ours.copy(), Session(root_packages=("app",)))

    assert {(v.importer, v.imported) for v in verdict.violations} == {
        (d.importer, d.imported) for d in expected
    }, (levels, sorted(ours.direct_imports()))


@pytest.mark.parametrize("seed", range(150))
def test_sibling_cycles_equal_grimps_cycle_breakers(seed: int) -> None:
    ours, theirs, _ = random_graphs(seed)
    for package in ("app", "app.one", "app.two"):
        children = ours.find_children(package)
        if len(children) < 2:
            continue
        assert (_sibling_cycle(ours, children) is not None) == bool(
            theirs.nominate_cycle_breakers(package)
        ), (package, sorted(ours.direct_imports()))


@pytest.mark.parametrize("seed", range(100))
def test_package_chains_exist_when_grimps_do(seed: int) -> None:
    ours, theirs, modules = random_graphs(seed)
    rng = random.Random(seed)
    for _ in range(10):
        a, b = rng.sample(modules, 2)
        if a.startswith(b + ".") or b.startswith(a + ".") or "app" in (a, b):
            continue
        found = ours.find_shortest_chain(ours.with_descendants(a), ours.with_descendants(b))
        assert (found is not None) == theirs.chain_exists(importer=a, imported=b, as_packages=True)
        if found is not None:
            # a real chain: consecutive links are direct imports
            assert all(
                theirs.direct_import_exists(importer=x, imported=y) for x, y in pairwise(found)
            )
