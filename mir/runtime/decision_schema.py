"""Schema checks for a decision: a pydantic model from the user's capability domain.

(An inline JSON schema is checked by the ``jsonschema`` adapter in ``schema_adapters``.)
Pydantic runs in strict JSON mode so that ``"100"`` is not silently taken for ``100``:
a model that answers with the wrong type is told so, not quietly corrected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from mir.runtime.integrity import SchemaCheck
from mir.runtime.records import Problem, ReasonCode

_WRONG_TYPE_SUFFIXES = ("_type", "_parsing")


def code_for_pydantic_error(error_type: str) -> ReasonCode:
    if error_type == "missing":
        return ReasonCode.MISSING_FIELD
    if error_type == "extra_forbidden":
        return ReasonCode.EXTRA_FIELD
    if error_type.endswith(_WRONG_TYPE_SUFFIXES):
        return ReasonCode.WRONG_TYPE
    return ReasonCode.SCHEMA_INVALID


def pydantic_schema_check(model: type[BaseModel]) -> SchemaCheck:
    def check(decision: Mapping[str, Any]) -> list[Problem]:
        try:
            # allow_nan: non-finite numbers are reported by the integrity check itself.
            text = json.dumps(dict(decision), allow_nan=True)
        except (TypeError, ValueError, RecursionError) as exc:  # not JSON data at all
            message = f"<root>: not JSON data ({type(exc).__name__})"
            return [Problem(code=ReasonCode.SCHEMA_INVALID, message=message)]
        try:
            model.model_validate_json(text, strict=True)
        except ValidationError as exc:
            return [
                Problem(
                    code=code_for_pydantic_error(err["type"]),
                    field=str(err["loc"][0]) if err["loc"] else None,
                    message=f"{'.'.join(map(str, err['loc'])) or '<root>'}: {err['msg']}",
                )
                for err in exc.errors()
            ]
        return []

    return check


def schema_fields(schema: Mapping[str, Any]) -> frozenset[str]:
    """Top-level fields a decision may have (empty when the schema does not say)."""
    properties = schema.get("properties")
    return frozenset(properties) if isinstance(properties, Mapping) else frozenset()
