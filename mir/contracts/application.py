"""Loading and validating the user's files into the models of ``domain``."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from mir.contracts.adapters import LocatedDocument, parse_yaml, read_text, split_front_matter
from mir.contracts.domain import AgentContract, EvalSuite, IntentDoc
from mir.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


def validate_document(doc: LocatedDocument, model: type[ModelT], where: str) -> ModelT:
    """Validate parsed YAML; the error names file, line and field of the first problem."""
    if not isinstance(doc.data, dict):
        raise ConfigError(
            f"expected a mapping of keys at the top, got {type(doc.data).__name__}", where=where
        )
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first.get("loc", ()))
        line = doc.line_of(loc)
        field = ".".join(str(p) for p in loc) or "<root>"
        more = len(exc.errors()) - 1
        suffix = f" (+{more} more)" if more else ""
        location = f"{where}:{line}" if line else where
        raise ConfigError(f"{field}: {first['msg']}{suffix}", where=location) from exc


def load_yaml_model(path: Path, model: type[ModelT]) -> ModelT:
    return validate_document(parse_yaml(read_text(path), str(path)), model, str(path))


def load_contract(path: Path) -> AgentContract:
    """An agent's responsibility contract (``agents/NAME.yaml``)."""
    return load_yaml_model(path, AgentContract)


def load_eval_suite(path: Path) -> EvalSuite:
    return load_yaml_model(path, EvalSuite)


def load_intent_doc(path: Path) -> IntentDoc:
    """The machine-checked front matter of a capability's CLAUDE.md."""
    text = read_text(path)
    parts = split_front_matter(text, str(path))
    if parts is None:
        raise ConfigError(
            "no front matter",
            where=f"{path}:1",
            hint="start the file with a '---' block: capability, depends_on, public, forbidden",
        )
    front, _body = parts
    return validate_document(parse_yaml(front, str(path), line_offset=1), IntentDoc, str(path))


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
