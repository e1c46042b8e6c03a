"""JSON Schema's name for the type of a parsed JSON value (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def json_type(value: Any) -> str:
    """``null``, ``boolean``, ``integer``, ``number``, ``string``, ``array`` or
    ``object``; a value JSON cannot hold gets its Python type's name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
