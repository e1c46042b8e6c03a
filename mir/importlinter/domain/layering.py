"""The ``layers`` contract: higher layers may import lower ones, never the reverse.

Semantics follow grimp's ``find_illegal_dependencies_for_layers``. Per container, every
(lower -> higher) pair of existing layer modules, and every pair of independent
siblings (``a | b``), is illegal when an import chain links them *treated as packages*
(the module and all its descendants). The chain may not pass through the container's
other layers: a chain ``low -> mid -> high`` is reported as the two direct violations
``low -> mid`` and ``mid -> high``, not as a third one.
"""

from __future__ import annotations

from mir.importlinter.domain.contracts import LayersContract, Session
from mir.importlinter.domain.graph import ImportGraph, is_in_package
from mir.importlinter.domain.verdicts import (
    ContractCheckError,
    ContractVerdict,
    Violation,
    chain_violation,
    remove_ignored_imports,
)


def check_layers(contract: LayersContract, graph: ImportGraph, session: Session) -> ContractVerdict:
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    containers: set[str] = set()
    for expression in contract.containers:
        containers |= (
            graph.find_matching_modules(expression)
            if expression.has_wildcard
            else {expression.text}
        )
    if contract.containers:
        _validate_containers(contract, graph, session, containers)
    else:
        _check_layers_exist(contract, graph, None)

    violations: list[Violation] = []
    for container in sorted(containers) or [None]:
        violations.extend(_illegal_dependencies(contract, graph, container))
    violations.extend(_undeclared_modules(contract, graph, containers))
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


def _validate_containers(
    contract: LayersContract, graph: ImportGraph, session: Session, containers: set[str]
) -> None:
    roots = session.root_packages
    for container in sorted(containers):
        if not any(is_in_package(container, root) for root in roots):
            if len(roots) == 1:
                raise ContractCheckError(
                    f"Invalid container '{container}': a container must either be a "
                    f"subpackage of {roots[0]}, or {roots[0]} itself."
                )
            raise ContractCheckError(
                f"Invalid container '{container}': a container must either be a root package, "
                f"or a subpackage of one of them. (The root packages are: {', '.join(roots)}.)"
            )
        _check_layers_exist(contract, graph, container)
    for container in sorted(containers):
        if container not in graph.modules:
            raise ContractCheckError(f"Container {container} does not exist.")


def _check_layers_exist(
    contract: LayersContract, graph: ImportGraph, container: str | None
) -> None:
    for layer in contract.layers:
        for tail in layer.tails:
            module = f"{container}.{tail.name}" if container else tail.name
            if tail.optional or module in graph.modules:
                continue
            if container:
                raise ContractCheckError(
                    f"Missing layer in container '{container}': module {module} does not exist."
                )
            raise ContractCheckError(
                f"Missing layer '{tail.name}': module {module} does not exist."
            )


def _illegal_dependencies(
    contract: LayersContract, graph: ImportGraph, container: str | None
) -> list[Violation]:
    def module(tail: str) -> str:
        return f"{container}.{tail}" if container else tail

    levels = [
        (
            [module(t.name) for t in layer.tails if module(t.name) in graph.modules],
            layer.independent,
        )
        for layer in contract.layers
    ]
    pairs: set[tuple[str, str]] = set()  # (importer, imported) that must not be linked
    for index, (modules, independent) in enumerate(levels):
        for higher in modules:
            for lower_modules, _ in levels[index + 1 :]:
                pairs.update((lower, higher) for lower in lower_modules)
            if independent:
                pairs.update((higher, sibling) for sibling in modules if sibling != higher)

    layer_modules = {
        m for modules, _ in levels for name in modules for m in graph.with_descendants(name)
    }
    return illegal_chains(graph, pairs, layer_modules)


def illegal_chains(
    graph: ImportGraph, pairs: set[tuple[str, str]], layer_modules: set[str]
) -> list[Violation]:
    """One violation per (importer, imported) pair of packages linked by a chain that
    passes through no *other* layer module. One search per importer serves all its pairs:
    other layers are reached but never gone through, and the first module of the
    imported package reached ends a chain, so it never passes through that package."""
    violations = []
    for importer in sorted({importer for importer, _ in pairs}):
        sources = graph.with_descendants(importer)
        tree = graph.reach(sources, layer_modules - sources)
        for imported in sorted(i for source, i in pairs if source == importer):
            chain = graph.chain_to(tree, graph.with_descendants(imported))
            if chain is not None:
                violations.append(chain_violation(graph, importer, imported, chain))
    return violations


def _undeclared_modules(
    contract: LayersContract, graph: ImportGraph, containers: set[str]
) -> list[Violation]:
    if not contract.exhaustive:
        return []
    declared = {tail.name for layer in contract.layers for tail in layer.tails}
    declared |= contract.exhaustive_ignores
    violations = []
    for container in sorted(containers):
        for child in sorted(graph.find_children(container)):
            if child.rpartition(".")[2] not in declared:
                violations.append(
                    Violation(
                        importer=child,
                        imported=container,
                        chain=(),
                        message=f"{child} is not listed as a layer (the contract is exhaustive: "
                        "every child of every container must be declared)",
                    )
                )
    return violations
