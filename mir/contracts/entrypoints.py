"""Loading the user's files: read and parse (adapters), then validate (application)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from mir.contracts.adapters import LocatedDocument, parse_yaml, read_text, split_front_matter
from mir.contracts.application import validate_document
from mir.contracts.domain import AgentContract, IntentDoc
from mir.contracts.eval_suite import EvalSuite
from mir.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


def _validate(doc: LocatedDocument, model: type[ModelT], where: str) -> ModelT:
    return validate_document(doc.data, doc.line_of, model, where)


def load_yaml_model(path: Path, model: type[ModelT]) -> ModelT:
    return _validate(parse_yaml(read_text(path), str(path)), model, str(path))


def field_line(path: Path, loc: tuple[str | int, ...]) -> int | None:
    """1-based line of a field of a YAML file (for errors found after loading it)."""
    try:
        return parse_yaml(read_text(path), str(path)).line_of(loc)
    except ConfigError:
        return None


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
    return _validate(parse_yaml(front, str(path), line_offset=1), IntentDoc, str(path))
