"""The two contracts about *direct* imports only: ``protected`` and ``private_modules``.

``protected``: only ``allowed_importers`` (and, as packages, the protected package's own
modules) may directly import a protected module. ``private_modules``: a module whose
name (or an ancestor's) starts with ``_`` (dunders excepted) may only be imported from
inside the parent package of its innermost private component. Semantics and messages
are import-linter 2.x's.
"""

from __future__ import annotations

from mir.importlinter.domain.contracts import PrivateModulesContract, ProtectedContract
from mir.importlinter.domain.expressions import ModuleExpression
from mir.importlinter.domain.graph import ImportGraph
from mir.importlinter.domain.options import is_private_name
from mir.importlinter.domain.verdicts import (
    ContractCheckError,
    ContractVerdict,
    Violation,
    links,
    remove_ignored_imports,
)


def _present(graph: ImportGraph, module: str) -> str:
    if module not in graph.modules:
        raise ContractCheckError(f'"{module}" not present in the graph.')
    return module


def _package(graph: ImportGraph, module: str, as_packages: bool) -> set[str]:
    if not as_packages:
        return {module}
    if _present(graph, module) in graph.squashed:
        raise ContractCheckError("Cannot find descendants of a squashed module.")
    return graph.with_descendants(module)


def _expand(graph: ImportGraph, expression: ModuleExpression) -> set[str]:
    return graph.find_matching_modules(expression) if expression.has_wildcard else {expression.text}


def check_protected(contract: ProtectedContract, graph: ImportGraph) -> ContractVerdict:
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    allowed: set[str] = set()
    for expression in contract.allowed_importers:
        for module in _expand(graph, expression):
            allowed |= _package(graph, module, contract.as_packages)
    violations = []
    for expression in contract.protected_modules:
        for top in sorted(_expand(graph, expression)):
            _present(graph, top)
            protected = {top}
            if contract.as_packages and top not in graph.squashed:
                protected = graph.with_descendants(top)
            importers = {i for m in protected for i in graph.importers_of(m)}
            for importer in sorted(importers - allowed - protected):
                for imported in sorted(set(graph.imports_of(importer)) & protected):
                    violations.append(
                        Violation(
                            importer, imported, links(graph, (importer, imported)),
                            f"{importer} may not import protected {imported}"
                            + (f" (via {expression})" if expression.has_wildcard else ""),
                        )
                    )  # fmt: skip
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


def check_private_modules(contract: PrivateModulesContract, graph: ImportGraph) -> ContractVerdict:
    ignored, warnings = remove_ignored_imports(
        graph, contract.ignore_imports, contract.unmatched_ignore_imports_alerting
    )
    modules = set(graph.modules) if not contract.packages_with_private_modules else set()
    for expression in contract.packages_with_private_modules:
        matched = _expand(graph, expression)
        if expression.has_wildcard and not matched:
            raise ContractCheckError(f"The expression '{expression}' did not match any modules.")
        if not expression.has_wildcard and expression.text not in graph.modules:
            raise ContractCheckError(f"Module '{expression}' does not exist.")
        private = sorted(m for m in matched if any(map(is_private_name, m.split("."))))
        if private:
            raise ContractCheckError(
                f"The expression '{expression}' in packages_with_private_modules matched "
                "packages that are private or inside a private module: "
                f"{', '.join(repr(p) for p in private)}. Packages cannot be private or inside "
                "a private module. List an ancestor that isn't private instead."
            )
        for module in matched:
            modules |= graph.with_descendants(module)
    violations = []
    for imported in sorted(modules):
        parent = _private_scope(imported)
        if parent is None:
            continue
        for importer in sorted(graph.importers_of(imported)):
            if importer != parent and not importer.startswith(parent + "."):
                violations.append(
                    Violation(
                        importer, imported, links(graph, (importer, imported)),
                        f"{imported} is private to {parent}; {importer} may not import it",
                    )
                )  # fmt: skip
    return ContractVerdict(contract, not violations, tuple(violations), warnings, ignored)


def _private_scope(module: str) -> str | None:
    """The parent of the module's innermost private component (never the top level)."""
    parts = module.split(".")
    for index in range(len(parts) - 1, 0, -1):
        if is_private_name(parts[index]):
            return ".".join(parts[:index])
    return None
