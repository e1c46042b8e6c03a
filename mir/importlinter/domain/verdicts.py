"""What checking one contract yields: kept or broken, with one chain per broken pair.

Also the two steps every contract type starts with (as in import-linter): dropping the
``ignore_imports`` edges from its private graph copy, and turning a found chain into
links that carry line numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from mir.importlinter.domain.contracts import AlertLevel, Contract
from mir.importlinter.domain.expressions import ImportExpression
from mir.importlinter.domain.graph import Chain, ImportGraph


class ContractCheckError(ValueError):
    """A problem import-linter reports as an error that stops the whole run (a missing
    layer module, an unmatched ``ignore_imports`` entry, ...): a config problem, not a
    broken contract."""


@dataclass(frozen=True)
class Link:
    """One direct import of a chain, with the lines of the statements that make it."""

    importer: str
    imported: str
    lines: tuple[int, ...]


@dataclass(frozen=True)
class Violation:
    """One broken pair: ``importer`` (downstream) must not depend on ``imported``.

    ``chain`` is one representative import chain (the shortest); it is empty for
    violations that are not about an import (an undeclared module of an exhaustive
    layers contract).
    """

    importer: str
    imported: str
    chain: tuple[Link, ...]
    message: str


@dataclass(frozen=True)
class ContractVerdict:
    contract: Contract
    kept: bool
    violations: tuple[Violation, ...] = ()
    warnings: tuple[str, ...] = ()
    ignored_import_count: int = 0


def links(graph: ImportGraph, chain: Chain) -> tuple[Link, ...]:
    return tuple(
        Link(importer, imported, tuple(graph.lines(importer, imported)))
        for importer, imported in pairwise(chain)
    )


def chain_violation(graph: ImportGraph, importer: str, imported: str, chain: Chain) -> Violation:
    """``importer`` reaches ``imported`` through ``chain``: the usual broken pair."""
    detailed = links(graph, chain)
    message = f"{importer} is not allowed to import {imported}: {describe_chain(detailed)}"
    return Violation(importer, imported, detailed, message)


def describe_chain(chain: tuple[Link, ...]) -> str:
    if not chain:
        return ""
    return " -> ".join([chain[0].importer, *(link.imported for link in chain)])


def remove_ignored_imports(
    graph: ImportGraph, ignore: tuple[ImportExpression, ...], alerting: AlertLevel
) -> tuple[int, tuple[str, ...]]:
    """Drop every import matched by ``ignore``; returns (removed count, warnings).

    An entry that matches nothing is an error by default, as in import-linter: a stale
    ignore would otherwise silently widen what the contract allows.
    """
    to_remove: set[tuple[str, str]] = set()
    unmatched: list[str] = []
    for expression in ignore:
        matched = graph.find_matching_imports(expression)
        if matched:
            to_remove.update(matched)
        elif str(expression) not in unmatched:
            unmatched.append(str(expression))
    messages = tuple(f"No matches for ignored import {text}." for text in unmatched)
    if messages and alerting is AlertLevel.ERROR:
        raise ContractCheckError("\n".join(messages))
    for importer, imported in to_remove:
        graph.remove_import(importer, imported)
    warnings = messages if alerting is AlertLevel.WARN else ()
    return len(to_remove), warnings
