"""The linted project as data: modules, capabilities, layers and resolved import edges.

Module names are dotted paths relative to the project root (a leading ``src/`` folder
is dropped), so ``capabilities/refunds/domain.py`` is ``capabilities.refunds.domain``
whether or not ``capabilities/`` has an ``__init__.py``; folders without one are linted
as namespace packages, never skipped. A capability is a folder directly under the
capabilities root; files directly in that root (``mir/errors.py``) belong to none.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from mir.boundaries.settings import LintSettings
from mir.contracts import LAYERS, IntentDoc

LAYER_RANK = {layer: rank for rank, layer in enumerate(LAYERS)}
INTERFACE = "interface"  # the capability's __init__: its public interface
TESTS = "tests"  # tests inside a capability: exempt from layer rules
FLAT = "flat"  # every module of a capability whose intent doc says `layout: flat`


class ParseProblem(NamedTuple):
    """Why a file could not be parsed (or decoded) by this interpreter."""

    line: int
    column: int
    message: str


class Ref(NamedTuple):
    """An import as the model holds it: ``ImportRef``'s fields, built from cached rows
    at tuple speed (tens of thousands per run)."""

    module: str
    names: tuple[str, ...]
    line: int
    column: int
    type_checking: bool = False
    beyond_top: bool = False


@dataclass(frozen=True, slots=True)
class SourceModule:
    """One Python file of the capabilities tree, with what the extractor found in it."""

    name: str
    path: str  # relative to the project root, POSIX
    is_package: bool
    imports: tuple[Ref, ...]
    problem: ParseProblem | None = None
    exports: tuple[str, ...] | None = None  # public names, for capability __init__ files
    ignores: tuple[tuple[int, tuple[str, ...]], ...] = ()  # ignore comments: (line, codes)
    size: int = 0  # bytes on disk


@dataclass(frozen=True, slots=True)
class IntentInfo:
    """A capability's intent doc: where it is, and what it says (or why it is invalid)."""

    path: str
    doc: IntentDoc | None
    error: str | None = None
    error_line: int = 1
    field_lines: dict[str, int] = field(default_factory=dict)
    # every (line, problem) when the front matter has several: a typo and the required
    # key it leaves missing are two findings, never "(+1 more)"
    problems: tuple[tuple[int, str], ...] = ()
    body: str = ""  # the prose after the front matter
    body_line: int = 1  # line of the body's first line


@dataclass(frozen=True, slots=True)
class Capability:
    name: str
    module: str  # dotted package name
    path: str  # folder, relative to the project root
    intent: IntentInfo | None
    has_init: bool
    markdown_bytes: int = 0  # every .md file of the folder, the intent doc included

    @property
    def doc(self) -> IntentDoc | None:
        return self.intent.doc if self.intent else None


class Edge(NamedTuple):
    """One import statement of one module, resolved to one imported module name, with
    both ends classified once (rules read these fields, never recompute them)."""

    importer: SourceModule
    ref: Ref
    target: str
    source_capability: str | None
    source_layer: str | None
    target_capability: str | None
    target_layer: str | None


@dataclass
class LintModel:
    """Everything the rules look at. Built once per run; rules never touch files."""

    base: str  # dotted name of the capabilities root ("mir", "capabilities")
    modules: dict[str, SourceModule]
    capabilities: dict[str, Capability]
    settings: LintSettings
    shared: tuple[str, ...] = ()
    local_roots: frozenset[str] = frozenset()  # top-level first-party names outside the root
    _edges: list[Edge] | None = None
    _capability_memo: dict[str, str | None] = field(default_factory=dict)
    _layer_memo: dict[str, str | None] = field(default_factory=dict)

    # ----------------------------------------------------------------- classification
    def capability_of(self, module: str) -> str | None:
        try:
            return self._capability_memo[module]
        except KeyError:
            found = self._capability_memo[module] = self._find_capability(module)
            return found

    def _find_capability(self, module: str) -> str | None:
        prefix = self.base + "."
        if not module.startswith(prefix):
            return None
        name = module[len(prefix) :].split(".", 1)[0]
        return name if name in self.capabilities else None

    def layer_of(self, module: str) -> str | None:
        """Layer of a module inside a capability: a name in LAYERS, INTERFACE, TESTS or FLAT."""
        try:
            return self._layer_memo[module]
        except KeyError:
            found = self._layer_memo[module] = self._find_layer(module)
            return found

    def _find_layer(self, module: str) -> str | None:
        capability = self.capability_of(module)
        if capability is None:
            return None
        rest = module[len(self.base) + len(capability) + 2 :]
        if not rest:
            return INTERFACE
        first = rest.split(".", 1)[0]
        if first == TESTS:
            return TESTS
        doc = self.capabilities[capability].doc
        if doc is not None and doc.layout == "flat":
            return FLAT
        if first in LAYER_RANK:
            return first
        if doc is not None and first in doc.layers:
            return doc.layers[first]
        return "adapters"  # unplaced (MIR205): counted as the outermost layer

    def is_placed(self, module: str) -> bool:
        """Is this module of a capability in a layer by name, by ``layers:`` or by a
        flat layout (the interface and tests need no place)? False also when the intent
        doc is missing or invalid: nothing places it."""
        capability = self.capability_of(module)
        if capability is None:
            return True
        rest = module[len(self.base) + len(capability) + 2 :]
        first = rest.split(".", 1)[0]
        if not rest or first in LAYER_RANK or first == TESTS or not first.isidentifier():
            return True  # a script (``my-script.py``) can be run, never imported
        doc = self.capabilities[capability].doc
        return doc is not None and (doc.layout == "flat" or first in doc.layers)

    def is_shared(self, module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in self.shared)

    def is_first_party(self, module: str) -> bool:
        top = module.split(".", 1)[0]
        return top == self.base.split(".", 1)[0] or top in self.local_roots

    @staticmethod
    def is_stdlib(module: str) -> bool:
        return module.split(".", 1)[0] in sys.stdlib_module_names

    # ----------------------------------------------------------------- import edges
    def resolve(self, ref: Ref) -> list[str]:
        """Imported module names of one statement: ``from a import b`` is ``a.b`` when
        ``a.b`` is a module of the project, else ``a``."""
        if ref.beyond_top or not ref.module:
            return []
        if not ref.names:
            return [ref.module]
        targets: list[str] = []
        for name in ref.names:
            candidate = f"{ref.module}.{name}"
            target = candidate if candidate in self.modules else ref.module
            if target not in targets:
                targets.append(target)
        return targets

    def edges(self) -> list[Edge]:
        if self._edges is None:
            counted = self.settings.type_checking_imports
            edges = []
            for module in self.modules.values():
                source_capability = self.capability_of(module.name)
                source_layer = self.layer_of(module.name)
                for ref in module.imports:
                    if ref.type_checking and not counted:
                        continue
                    for target in self.resolve(ref):
                        edges.append(
                            Edge(
                                module,
                                ref,
                                target,
                                source_capability,
                                source_layer,
                                self.capability_of(target),
                                self.layer_of(target),
                            )
                        )
            self._edges = edges
        return self._edges

    def cross_capability_edges(self) -> Iterator[tuple[Edge, str | None, str]]:
        """(edge, importer capability, imported capability) for imports between two
        different capabilities (the importer may be outside any capability)."""
        for edge in self.edges():
            target_cap = edge.target_capability
            if target_cap is None or target_cap == edge.source_capability:
                continue
            if not self.is_shared(edge.target):
                yield edge, edge.source_capability, target_cap
