"""Dotted paths into a decision: reading a value, and finding the field in the schema.

An assertion names a decision field by a dotted path (``amount``, ``refund.amount``, a
list index ``items.0``). Reading is total (a missing field is an answer, never an
exception) because a model's decision may be anything. Resolving against the decision
schema is what lets a suite be checked before any model call; it follows what JSON
schemas written by pydantic and by hand contain: ``properties``, nested objects,
``items`` / ``prefixItems``, local ``$ref`` into ``$defs`` / ``definitions``,
``anyOf`` / ``oneOf`` / ``allOf``.

An object with ``properties`` is taken as closed unless ``additionalProperties`` says
otherwise: the runtime refuses top-level fields outside them, and a path outside them
is far more often a typo than an intent. An object (or a schema) that lists no
properties accepts any path below it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mir.contracts import json_type

_MISSING = object()
_MAX_DEPTH = 64  # $ref cycles and absurdly deep schemas stop here


def split_path(path: str) -> list[str]:
    return path.split(".")


def read_path(decision: Any, path: str) -> tuple[bool, Any]:
    """(found, value) of ``path`` in ``decision``; list items by 0-based index."""
    node = decision
    for part in split_path(path):
        if isinstance(node, Mapping):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and _is_index(part):
            index = int(part)
            node = node[index] if index < len(node) else _MISSING
        else:
            return False, None
        if node is _MISSING:
            return False, None
    return True, node


def _is_index(part: str) -> bool:
    return part.isascii() and part.isdigit()


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON means it: ``1 == 1.0``, but ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        return bool(a == b)
    except Exception:  # an exotic value's __eq__ must not break an eval
        return False


def is_number(value: Any) -> bool:
    """An int or a finite float; a bool is not a number."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


# ------------------------------------------------------------------ schema side
@dataclass(frozen=True)
class SchemaField:
    """What the schema says about the field a path reaches.

    ``types``: the JSON types it may have, or None when the schema does not say (any).
    ``values``: the only values it may take (``enum`` / ``const``), or None.
    """

    types: frozenset[str] | None
    values: tuple[Any, ...] | None


@dataclass(frozen=True)
class Unresolved:
    """The path leaves the schema at ``at`` (the part of the path that is unknown);
    ``known`` lists the names the schema accepts there (for a suggestion)."""

    at: str
    known: tuple[str, ...]


def resolve_path(schema: Any, path: str) -> SchemaField | Unresolved:
    """The schema of the field at ``path``, or where the path leaves the schema."""
    resolver = _Resolver(schema if isinstance(schema, Mapping) else {})
    nodes: list[Any] = [schema]
    parts = split_path(path)
    for index, part in enumerate(parts):
        found: list[Any] = []
        known: list[str] = []
        for node in nodes:
            for branch in resolver.branches(node):
                child = _child(branch, part, known)
                if child is not None:
                    found.append(child)
        if not found:
            return Unresolved(".".join(parts[: index + 1]), tuple(dict.fromkeys(known)))
        nodes = _distinct(found)
        if resolver.budget < 0:
            return SchemaField(types=None, values=None)  # too costly to tell: anything goes
    return _describe(resolver, nodes)


_OPEN: dict[str, Any] = {}  # a schema that says nothing: anything goes below it


def _child(node: Any, part: str, known: list[str]) -> Any | None:
    """The subschema for ``part`` below ``node`` (one branch), or None if refused."""
    if node is True or node == {}:
        return _OPEN
    if not isinstance(node, Mapping):
        return None
    types = _types(node)
    if types is not None and not types & {"object", "array"}:
        return None  # a scalar has nothing below it
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        if part in properties:
            return properties[part]
        known.extend(str(k) for k in properties)
    arrayish = "items" in node or "prefixItems" in node or (types is not None and "array" in types)
    if _is_index(part) and arrayish:
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and int(part) < len(prefix):
            return prefix[int(part)]
        items = node.get("items", _OPEN)
        if items is not False:
            return items if isinstance(items, Mapping) or items is True else _OPEN
    if types == frozenset({"array"}):
        return None
    extra = node.get("additionalProperties", _MISSING)
    if extra is _MISSING:
        # closed when it lists properties (see the module docstring), open otherwise
        listed = isinstance(properties, Mapping) or isinstance(node.get("patternProperties"), dict)
        return None if listed else _OPEN
    if extra is False:
        return None
    return extra if isinstance(extra, Mapping) else _OPEN


def _types(node: Mapping[str, Any]) -> frozenset[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        names = {declared}
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        names = set(declared)
    else:
        values = _values(node)
        if values is None:
            return None
        names = {json_type(v) for v in values}
    if "integer" in names:
        names.add("number")  # every integer is a number; a number field accepts 3
    return frozenset(names)


def _values(node: Mapping[str, Any]) -> tuple[Any, ...] | None:
    if "const" in node:
        return (node["const"],)
    enum = node.get("enum")
    return tuple(enum) if isinstance(enum, list) else None


def _describe(resolver: _Resolver, nodes: list[Any]) -> SchemaField:
    types: set[str] = set()
    values: list[Any] = []
    any_type = any_value = False
    for node in nodes:
        for branch in resolver.branches(node):
            if not isinstance(branch, Mapping) or branch is _OPEN:
                any_type = any_value = True
                continue
            found = _types(branch)
            if found is None:
                any_type = True
            else:
                types |= found
            listed = _values(branch)
            if listed is None:
                any_value = True
            else:
                values.extend(listed)
    return SchemaField(
        types=None if any_type else frozenset(types),
        values=None if any_value else tuple(values),
    )


class _Resolver:
    """Follows local ``$ref``s and flattens ``anyOf`` / ``oneOf`` / ``allOf`` branches.

    Bounded: a ``$ref`` already on the way (a cycle) and anything past the work budget
    count as an open schema, so a self-referencing or combinatorially branching schema
    costs little and never yields a false problem."""

    def __init__(self, root: Mapping[str, Any], budget: int = 600):
        self.root = root
        self.budget = budget

    def branches(self, node: Any, refs: frozenset[str] = frozenset()) -> list[Any]:
        self.budget -= 1
        if self.budget < 0 or len(refs) > _MAX_DEPTH:
            return [_OPEN]
        if not isinstance(node, Mapping):
            return [node] if node is True else ([] if node is False else [_OPEN])
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in refs:
                return [_OPEN]
            out = self.branches(self._lookup(ref), refs | {ref})
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return out + ([rest] if _constrains(rest) else [])
        combined = [
            branch
            for key in ("anyOf", "oneOf", "allOf")
            if isinstance(node.get(key), list)
            for branch in node[key]
        ]
        if not combined:
            return [node]
        own = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "allOf")}
        out = [b for branch in combined for b in self.branches(branch, refs)]
        # keys beside the combinators (an object's properties next to an allOf) count too
        return _distinct(out + ([own] if _constrains(own) else []))

    def _lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return _OPEN  # a remote schema: not ours to check
        node: Any = self.root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and _is_index(key) and int(key) < len(node):
                node = node[int(key)]
            else:
                return _OPEN
        return node


def _distinct(nodes: list[Any]) -> list[Any]:
    seen: set[int] = set()
    return [n for n in nodes if not (id(n) in seen or seen.add(id(n)))]


_DESCRIPTIVE = {"title", "description", "default", "examples", "$defs", "definitions", "$schema"}


def _constrains(node: Mapping[str, Any]) -> bool:
    return any(k not in _DESCRIPTIVE for k in node)
