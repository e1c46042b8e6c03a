"""Human labels a judge is calibrated on (``mir eval calibrate LABELS.jsonl``).

A labels file is JSONL, one human judgement a line, in one of two kinds:

- rubric: ``{"input": {...}, "decision": {...}, "rubric": "...", "label": "pass"|"fail"}``
- pairwise: ``{"input": {...}, "a": ..., "b": ..., "criteria": "...", "label": "A"|"B"|"tie"}``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mir.errors import ConfigError
from mir.evals.calibration_records import Kind

KIND_LABELS: dict[str, tuple[str, ...]] = {
    "rubric": ("pass", "fail"),
    "pairwise": ("A", "B", "tie"),
}


class _Label(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(None, description="Optional name of the example, for the report.")
    input: dict[str, Any]
    context: dict[str, Any] | None = Field(None, description="The world, when it matters.")


class RubricLabel(_Label):
    decision: Any = Field(description="The answer graded (a decision, or one field of it).")
    rubric: str = Field(min_length=1)
    label: Literal["pass", "fail"]

    kind: ClassVar[Kind] = "rubric"


class PairwiseLabel(_Label):
    a: Any
    b: Any
    criteria: str = Field(min_length=1)
    label: Literal["A", "B", "tie"]

    kind: ClassVar[Kind] = "pairwise"


def read_labels(path: Path) -> list[RubricLabel | PairwiseLabel]:
    """Every labelled example; a missing file, a bad line or an unknown label is one
    ConfigError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(
            "labels file not found",
            where=str(path),
            hint="write one JSON object a line: input, decision, rubric, label (pass|fail)",
        ) from exc
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise ConfigError("labels file is not a UTF-8 text file", where=str(path)) from exc
    examples: list[RubricLabel | PairwiseLabel] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not JSON: {exc.msg}", where=where, hint=_FORMAT_HINT) from exc
        examples.append(_example(raw, where))
    if not examples:
        raise ConfigError("labels file has no examples", where=str(path))
    return examples


def _example(raw: Any, where: str) -> RubricLabel | PairwiseLabel:
    if not isinstance(raw, dict):
        raise ConfigError("a line must be a JSON object", where=where)
    model: type[RubricLabel | PairwiseLabel] = PairwiseLabel if "criteria" in raw else RubricLabel
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "line"
        allowed = " | ".join(KIND_LABELS["pairwise" if model is PairwiseLabel else "rubric"])
        hint = f"label is one of {allowed}" if field == "label" else _FORMAT_HINT
        raise ConfigError(f"{field}: {error['msg']}", where=where, hint=hint) from exc


_FORMAT_HINT = (
    'a rubric line: {"input", "decision", "rubric", "label": "pass"|"fail"}; '
    'a pairwise line: {"input", "a", "b", "criteria", "label": "A"|"B"|"tie"}'
)
