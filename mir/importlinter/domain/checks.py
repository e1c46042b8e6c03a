"""The ``forbidden``, ``independence`` and ``acyclic_siblings`` contracts, and the
dispatch from a contract to its check. Semantics are import-linter 2.x's (see each
function); ``layers`` lives in ``layering``.
"""

from __future__ import annotations

from mir.importlinter.domain.contracts import (
    AcyclicSiblingsContract,
    Contract,
    ForbiddenContract,
    IndependenceContract,
    LayersContract,
    PrivateModulesContract,
    ProtectedContract,
    Session,
)
from mir.importlinter.domain.direct import check_private_modules, check_protected
from mir.importlinter.domain.expressions import ModuleExpression
from mir.importlinter.domain.graph import ImportGraph, is_in_package
from mir.importlinter.domain.layering import check_layers, illegal_chains
from mir.importlinter.domain.verdicts import (
    ContractCheckError,
    ContractVerdict,
    Violation,
    chain_violation,
    links,
    remove_ignored_imports,
)


def check_contract(contract: Contract, graph: ImportGraph, session: Session) -> ContractVerdict:
    """Check one contract against a private copy of ``graph``."""
    own = graph.copy()
    if isinstance(contract, LayersContract):
        return check_layers(contract, own, session)
    if isinstance(contract, ForbiddenContract):
        return check_forbidden(contract, own, session)
    if isinstance(contract, IndependenceContract):
        return check_independence(contract, own)
    if isinstance(contract, ProtectedContract):
        return check_protected(contract, own)
    if isinstance(contract, PrivateModulesContract):
        return check_private_modules(contract, own)
    return check_acyclic_siblings(contract, own)


def _modules(graph: ImportGraph, expressions: tuple[ModuleExpression, ...]) -> set[str]:
    """Wildcards expand to matching modules; plain names are taken as written."""
    found: set[str] = set()
    for expression in expressions:
        found |= (
            graph.find_matching_modules(expression)
            if expression.has_wildcard
            else {expression.text}
        )
    return found


def _require_present(graph: ImportGraph, modules: set[str]) -> None:
    for module in sorted(modules):
        if module not in graph.modules:
            raise ContractCheckError(f"Module '{module}' does not exist.")


# --------------------------------------------------------------------------- forbidden
def check_forbidden(
    contract: ForbiddenContract, graph: ImportGraph, session: Session
) -> ContractVerdict:
    """Source modules may not import forbidden ones, even indirectly (unless
    ``allow_indirect_imports``). External forbidden modules need
    ``include_external_packages`` and must be top-level names. Overlapping pairs (a
    source inside a forbidden package or vice versa) are skipped."""
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    sources = _modules(graph, contract.source_modules)
    forbidden = _modules(graph, contract.forbidden_modules)
    internal = {m for m in forbidden if any(is_in_package(m, r) for r in session.root_packages)}
    external = forbidden - internal
    _require_present(graph, sources)
    _require_present(graph, internal)
    if external:
        if not session.include_external_packages:
            raise ContractCheckError(
                "The top level configuration must have include_external_packages=True "
                "when there are external forbidden modules."
            )
        for module in sorted(external):
            if "." in module:
                raise ContractCheckError(
                    f"Invalid forbidden module {module}: "
                    "subpackages of external packages are not valid."
                )

    def package(module: str) -> set[str]:
        return graph.with_descendants(module) if contract.as_packages else {module}

    violations = []
    for source in sorted(sources):
        tree = None if contract.allow_indirect_imports else graph.reach(package(source))
        for target in sorted(m for m in forbidden if m in graph.modules):
            overlap = source == target or (
                contract.as_packages
                and (is_in_package(source, target) or is_in_package(target, source))
            )
            if overlap:
                continue
            chain = (
                _direct_chain(graph, package(source), package(target))
                if tree is None
                else graph.chain_to(tree, package(target))
            )
            if chain is not None:
                violations.append(chain_violation(graph, source, target, chain))
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


def _direct_chain(
    graph: ImportGraph, sources: set[str], targets: set[str]
) -> tuple[str, ...] | None:
    for source in sorted(sources):
        for imported in sorted(graph.imports_of(source)):
            if imported in targets:
                return (source, imported)
    return None


# --------------------------------------------------------------------------- independence
def check_independence(contract: IndependenceContract, graph: ImportGraph) -> ContractVerdict:
    """No chain between any two of the modules (as packages), in either direction; a
    chain through a third listed module counts against that module's pairs only."""
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    modules = _modules(graph, contract.modules)
    _require_present(graph, modules)
    everything = {m for module in modules for m in graph.with_descendants(module)}
    pairs = {(a, b) for a in modules for b in modules if a != b}
    violations = illegal_chains(graph, pairs, everything)
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


# --------------------------------------------------------------------------- acyclic
def check_acyclic_siblings(
    contract: AcyclicSiblingsContract, graph: ImportGraph
) -> ContractVerdict:
    """No import cycle between the children of each ancestor (each child standing for
    its whole subtree), recursing ``depth`` levels below each ancestor."""
    overlap = set(contract.ancestors) & set(contract.skip_descendants)
    if overlap:
        first = sorted(overlap)[0]
        if first.has_wildcard:
            raise ContractCheckError(
                f"Cannot skip descendant '{first}' as the same expression is in ancestors."
            )
        raise ContractCheckError(f"Cannot skip '{first}' as it is also an ancestor.")
    ancestors = _existing(graph, contract.ancestors)
    skipped = _existing(graph, contract.skip_descendants)
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    violations: list[Violation] = []
    for ancestor in sorted(ancestors):
        _find_cycles(graph, ancestor, contract.depth, skipped, violations)
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


def _existing(graph: ImportGraph, expressions: tuple[ModuleExpression, ...]) -> set[str]:
    found: set[str] = set()
    for expression in sorted(expressions):
        if expression.has_wildcard:
            matches = graph.find_matching_modules(expression)
            if not matches:
                raise ContractCheckError(
                    f"The expression '{expression}' did not match any modules."
                )
            found |= matches
        elif expression.text not in graph.modules:
            raise ContractCheckError(f"Module '{expression}' does not exist.")
        else:
            found.add(expression.text)
    return found


def _find_cycles(
    graph: ImportGraph, ancestor: str, depth: int, skipped: set[str], out: list[Violation]
) -> None:
    if ancestor in graph.squashed:
        return
    children = graph.find_children(ancestor)
    if not children:
        return
    if len(children) >= 2 and (cycle := _sibling_cycle(graph, children)):
        chain = " -> ".join(child.rpartition(".")[2] for child in cycle)
        out.append(
            Violation(
                importer=cycle[0],
                imported=cycle[1],
                chain=links(graph, _first_import(graph, cycle[0], cycle[1])),
                message=f"No cycles are allowed in {ancestor}: .{chain.replace(' -> ', ' -> .')}",
            )
        )
    if depth:
        for child in sorted(children - skipped):
            _find_cycles(graph, child, depth - 1, skipped, out)


def _sibling_cycle(graph: ImportGraph, children: set[str]) -> list[str] | None:
    """A cycle in the graph whose nodes are the children (each with its descendants)."""
    owner = {m: child for child in children for m in graph.with_descendants(child)}
    edges: dict[str, set[str]] = {child: set() for child in children}
    for importer, a in owner.items():
        for imported in graph.imports_of(importer):
            b = owner.get(imported)
            if b and b != a:
                edges[a].add(b)
    # Depth-first search for a back edge; the stack between its ends is a cycle.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for child in sorted(children):
        if child not in state and (found := visit(child)):
            return found
    return None


def _first_import(graph: ImportGraph, importer_pkg: str, imported_pkg: str) -> tuple[str, ...]:
    targets = graph.with_descendants(imported_pkg)
    for importer in sorted(graph.with_descendants(importer_pkg)):
        for imported in sorted(graph.imports_of(importer)):
            if imported in targets:
                return (importer, imported)
    return ()
