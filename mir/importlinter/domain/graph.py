"""The module import graph contracts are checked against (grimp's model, in pure Python).

Nodes are the modules of the root packages (files and namespace folders) plus, when
``include_external_packages`` is on, one *squashed* node per external distribution
(``requests``, never ``requests.adapters``). Edges are direct imports and keep the line
numbers of every statement that made them, so a broken chain can point at a line.

Contracts mutate a private copy (``ignore_imports`` removes edges), never the shared one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from pathlib import Path

from mir.importlinter.domain.expressions import ImportExpression, ModuleExpression

Chain = tuple[str, ...]


def is_in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


class ImportGraph:
    """Modules and the direct imports between them."""

    def __init__(self) -> None:
        self.modules: set[str] = set()
        self.squashed: set[str] = set()
        # importer -> imported -> line numbers of the statements
        self._imports: dict[str, dict[str, list[int]]] = {}
        self._children: dict[str, set[str]] | None = None
        self._descendants: dict[str, set[str]] | None = None
        # After copy(), both graphs share the per-importer maps until one writes to a
        # map (copy-on-write): every contract gets a copy, few remove anything, and a
        # deep copy per contract was a third of checking a 4,000-module tree.
        self._shared = False
        self._owned: set[str] = set()

    # ------------------------------------------------------------------ building
    def add_module(self, module: str, *, squashed: bool = False) -> None:
        self.modules.add(module)
        if squashed:
            self.squashed.add(module)
        self._children = self._descendants = None

    def _writable(self, importer: str) -> dict[str, list[int]]:
        targets = self._imports.get(importer)
        if targets is None:
            targets = self._imports[importer] = {}
        elif self._shared and importer not in self._owned:
            targets = self._imports[importer] = {i: list(ls) for i, ls in targets.items()}
        if self._shared:
            self._owned.add(importer)
        return targets

    def add_import(self, importer: str, imported: str, line: int) -> None:
        if importer not in self.modules:
            self.add_module(importer)
        if imported not in self.modules:
            self.add_module(imported)
        self._writable(importer).setdefault(imported, []).append(line)

    def remove_import(self, importer: str, imported: str) -> None:
        if imported in self._imports.get(importer, ()):
            self._writable(importer).pop(imported)

    def copy(self) -> ImportGraph:
        clone = ImportGraph()
        clone.modules = set(self.modules)
        clone.squashed = set(self.squashed)
        clone._imports = dict(self._imports)
        # the hierarchy indexes depend on the modules only (add_module resets them):
        # built once here, shared by every copy, never changed in place
        clone._children, clone._descendants = self._child_index(), self._descendant_index()
        for graph in (self, clone):
            graph._shared, graph._owned = True, set()
        return clone

    # ------------------------------------------------------------------ hierarchy
    def _child_index(self) -> dict[str, set[str]]:
        if self._children is None:
            children: dict[str, set[str]] = {}
            for name in self.modules:
                parent, dot, _ = name.rpartition(".")
                if dot:
                    children.setdefault(parent, set()).add(name)
            self._children = children
        return self._children

    def _descendant_index(self) -> dict[str, set[str]]:
        if self._descendants is None:
            # every dotted prefix -> the modules below it (prefixes need not be modules)
            index: dict[str, set[str]] = {}
            for name in self.modules:
                parts = name.split(".")
                for end in range(1, len(parts)):
                    index.setdefault(".".join(parts[:end]), set()).add(name)
            self._descendants = index
        return self._descendants

    def find_children(self, module: str) -> set[str]:
        return set(self._child_index().get(module, ()))

    def find_descendants(self, module: str) -> set[str]:
        if module in self.squashed:
            return set()
        return set(self._descendant_index().get(module, ()))

    def with_descendants(self, module: str) -> set[str]:
        return {module} | self.find_descendants(module)

    # ------------------------------------------------------------------ imports
    def imports_of(self, importer: str) -> dict[str, list[int]]:
        return self._imports.get(importer, {})

    def importers_of(self, imported: str) -> set[str]:
        return {importer for importer, targets in self._imports.items() if imported in targets}

    def lines(self, importer: str, imported: str) -> list[int]:
        return sorted(self._imports.get(importer, {}).get(imported, []))

    def direct_imports(self) -> Iterable[tuple[str, str]]:
        for importer, targets in self._imports.items():
            for imported in targets:
                yield importer, imported

    def count_imports(self) -> int:
        return sum(len(targets) for targets in self._imports.values())

    def find_matching_modules(self, expression: ModuleExpression) -> set[str]:
        if not expression.has_wildcard:
            return {expression.text} if expression.text in self.modules else set()
        return {name for name in self.modules if expression.matches(name)}

    def find_matching_imports(self, expression: ImportExpression) -> list[tuple[str, str]]:
        return sorted(
            (importer, imported)
            for importer, imported in self.direct_imports()
            if expression.importer.matches(importer) and expression.imported.matches(imported)
        )

    # ------------------------------------------------------------------ chains
    def find_shortest_chain(
        self, sources: Set[str], targets: Set[str], excluded: Set[str] = frozenset()
    ) -> Chain | None:
        """Shortest import chain from any of ``sources`` to any of ``targets``, whose
        intermediate modules are never in ``excluded``."""
        return self.chain_to(self.reach(sources, excluded | targets), targets)

    def reach(self, sources: Set[str], excluded: Set[str] = frozenset()) -> dict[str, str | None]:
        """Breadth-first tree from ``sources``: each reached module -> the module it was
        reached from, in the order reached. Excluded modules are reached but never gone
        through. Neighbours are visited sorted, so the same graph always gives the same
        chains. One tree answers "shortest chain to X" for every X at once, which is how
        a contract with many pairs sharing an importer stays one search per importer."""
        previous: dict[str, str | None] = dict.fromkeys(sorted(sources))
        queue: deque[str] = deque(previous)
        while queue:
            module = queue.popleft()
            for imported in sorted(self._imports.get(module, ())):
                if imported in previous:
                    continue
                previous[imported] = module
                if imported not in excluded:
                    queue.append(imported)
        return previous

    def chain_to(self, tree: dict[str, str | None], targets: Set[str]) -> Chain | None:
        """The chain in ``tree`` (from ``reach``) to the first-reached of ``targets``."""
        for module, step in tree.items():
            if step is not None and module in targets:
                return self._unwind(tree, module)
        return None

    @staticmethod
    def _unwind(previous: dict[str, str | None], end: str) -> Chain:
        chain = [end]
        step = previous[end]
        while step is not None:
            chain.append(step)
            step = previous[step]
        return tuple(reversed(chain))


@dataclass
class SourceGraph:
    """A graph built from source files, with the file of each module (for findings)."""

    graph: ImportGraph
    files: dict[str, Path] = field(default_factory=dict)
