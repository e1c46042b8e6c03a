"""Checking a decision against an inline JSON schema (contract ``decision.json_schema``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mir.errors import ConfigError
from mir.runtime.integrity import SchemaCheck
from mir.runtime.records import Problem, ReasonCode

_CODES = {
    "required": ReasonCode.MISSING_FIELD,
    "additionalProperties": ReasonCode.EXTRA_FIELD,
    "type": ReasonCode.WRONG_TYPE,
}


def json_schema_check(
    schema: Mapping[str, Any], where: str, field: str = "decision.json_schema"
) -> SchemaCheck:
    import jsonschema

    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"{field}: {exc.message}", where=where) from exc
    validator = validator_cls(dict(schema))

    def check(decision: Mapping[str, Any]) -> list[Problem]:
        problems = []
        for err in validator.iter_errors(dict(decision)):
            path = list(err.absolute_path)
            field = str(path[0]) if path else None
            if err.validator == "required" and isinstance(err.instance, dict):
                missing = [f for f in err.validator_value if f not in err.instance]
                field = missing[0] if missing else field
            problems.append(
                Problem(
                    code=_CODES.get(str(err.validator), ReasonCode.SCHEMA_INVALID),
                    field=field,
                    message=f"{'.'.join(map(str, path)) or '<root>'}: {err.message}",
                )
            )
        return problems

    return check
