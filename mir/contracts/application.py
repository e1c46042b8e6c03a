"""Validating parsed documents into the models of ``domain`` (no file I/O here)."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mir.contracts.domain import AgentContract, EvalSuite, IntentDoc
from mir.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


class LineLocator(Protocol):
    """Port: the 1-based line of a field path (a pydantic error ``loc``), if known."""

    def __call__(self, loc: tuple[Any, ...]) -> int | None: ...


def validate_document(data: Any, line_of: LineLocator, model: type[ModelT], where: str) -> ModelT:
    """Validate parsed YAML; the error names file, line and field of the first problem."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of keys at the top, got {type(data).__name__}", where=where
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first.get("loc", ()))
        line = line_of(loc)
        field = ".".join(str(p) for p in loc) or "<root>"
        more = len(exc.errors()) - 1
        suffix = f" (+{more} more)" if more else ""
        location = f"{where}:{line}" if line else where
        raise ConfigError(f"{field}: {first['msg']}{suffix}", where=location) from exc


def json_schemas() -> dict[str, dict]:
    """JSON schemas of every user-written format, keyed by file name, for editors and CI."""
    from mir.project import MirSettings

    models: dict[str, type[BaseModel]] = {
        "agent-contract.schema.json": AgentContract,
        "intent-doc.schema.json": IntentDoc,
        "eval-suite.schema.json": EvalSuite,
        "tool-mir.schema.json": MirSettings,
    }
    return {name: model.model_json_schema() for name, model in models.items()}
