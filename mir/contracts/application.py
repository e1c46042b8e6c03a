"""Validating parsed documents into the models of ``domain`` (no file I/O here)."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mir.contracts.domain import AgentContract, IntentDoc
from mir.contracts.eval_suite import EvalSuite
from mir.errors import ConfigError, did_you_mean
from mir.project import known_keys

ModelT = TypeVar("ModelT", bound=BaseModel)

# Past this many problems the rest is counted, not listed: the first ones are the cause.
MAX_LISTED = 20


class LineLocator(Protocol):
    """Port: the 1-based line of a field path (a pydantic error ``loc``), if known."""

    def __call__(self, loc: tuple[Any, ...]) -> int | None: ...


def validate_document(data: Any, line_of: LineLocator, model: type[ModelT], where: str) -> ModelT:
    """Validate parsed YAML; the error lists every problem, each with its own line.

    An unknown key comes first, with the closest known key: ``actoins:`` is the cause,
    the ``actions: Field required`` it leads to is the consequence.
    """
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of keys at the top, got {type(data).__name__}", where=where
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, line_of, model, where) from exc


def describe_problems(
    exc: ValidationError, model: type[BaseModel]
) -> list[tuple[bool, tuple[Any, ...], str]]:
    """(is an unknown key, loc, ``field: message``) of every error; unknown keys carry the
    closest known key as a suggestion."""
    schema: dict[str, Any] | None = None
    problems = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        field = ".".join(str(p) for p in loc) or "<root>"
        if error["type"] == "extra_forbidden" and loc:
            schema = schema if schema is not None else model.model_json_schema()
            close = did_you_mean(loc[-1], known_keys(schema, loc[:-1]))
            hint = f" (did you mean `{close}`?)" if close else ""
            problems.append((True, loc, f"{field}: unknown key{hint}"))
        else:
            problems.append((False, loc, f"{field}: {_message(error)}"))
    return problems


def _message(error: Any) -> str:
    # a validator's own ValueError already says what is wrong; pydantic's "Value error, "
    # prefix is noise to someone editing YAML
    if error["type"] == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    return str(error["msg"])


class DocumentError(ConfigError):
    """A document with one or more problems, each at its own ``file:line``.

    ``message`` / ``where`` hold the first problem, with a count of the others, for readers
    that show one line per file (a lint finding); ``str()`` lists every problem on its own
    line, which is what the CLI prints; ``problems`` holds the (where, text) pairs.
    """

    def __init__(self, problems: list[tuple[str, str]]):
        first_where, first_text = problems[0]
        more = len(problems) - 1
        super().__init__(first_text + (f" (+{more} more)" if more else ""), where=first_where)
        self.problems = problems

    def __str__(self) -> str:
        lines = [f"{where}: {text}" for where, text in self.problems[:MAX_LISTED]]
        if len(self.problems) > MAX_LISTED:
            lines.append(f"(+{len(self.problems) - MAX_LISTED} more)")
        return "\n".join(lines)


def validation_error(
    exc: ValidationError, line_of: LineLocator, model: type[BaseModel], where: str
) -> DocumentError:
    """Every problem at its own ``file:line``: unknown keys first, each group in file order."""
    located = [
        (not unknown, line_of(loc) or 0, text)
        for unknown, loc, text in describe_problems(exc, model)
    ]
    located.sort(key=lambda item: item[:2])
    return DocumentError([(f"{where}:{line}" if line else where, t) for _, line, t in located])


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
