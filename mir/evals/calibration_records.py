"""The judge's calibration records (``judge-calibration.json``) and what they decide.

The file is a JSON list, newest last, committed beside the labels so CI can gate on
``judge.min_kappa``. A record counts only for the judge that made it: the same model
and prompt hash (``JudgeIdentity``). Judge assertions gate only when the latest record
of each kind for this judge reaches the suite's ``min_kappa`` (``gating``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mir.contracts import JudgeSettings
from mir.errors import ConfigError
from mir.evals.judge_identity import JudgeIdentity
from mir.storage import write_atomic

Kind = Literal["rubric", "pairwise"]
RECORDS_FILE = "judge-calibration.json"


class Confusion(BaseModel):
    model_config = ConfigDict(frozen=True)

    labels: list[str] = Field(description="Row = human label, column = judge's verdict.")
    matrix: list[list[int]]


class CalibrationRecord(BaseModel):
    """One calibration of one judge on one kind of labels (a line of the records file)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    judge_model: str = Field(description="'llama:default', 'litellm:<id>', 'scripted'.")
    prompt_hash: str
    kind: Kind
    kappa: float | None = Field(description="Cohen's kappa; null when undefined.")
    agreement: float
    n: int
    labels: str = Field(description="The labels file, relative to the records file.")
    at: datetime
    confusion: Confusion | None = None
    position_consistency: float | None = None


def read_calibrations(path: Path) -> list[CalibrationRecord]:
    """The records in ``path`` (oldest first); none when the file does not exist."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"calibration records unreadable: {exc}", where=str(path)) from exc
    if not isinstance(raw, list):
        raise ConfigError("calibration records must be a JSON list", where=str(path))
    try:
        return [CalibrationRecord.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise ConfigError(
            f"calibration records malformed: {exc.errors()[0]['msg']}", where=str(path)
        ) from exc


def latest_calibrations(
    records: Sequence[CalibrationRecord], judge_model: str, prompt_hash: str
) -> list[CalibrationRecord]:
    """The newest record of each kind for this judge (same model and prompt hash)."""
    latest: dict[str, CalibrationRecord] = {}
    for record in records:
        if record.judge_model == judge_model and record.prompt_hash == prompt_hash:
            latest[record.kind] = record  # the list is oldest first: the last one wins
    return list(latest.values())


def append_calibrations(path: Path, new: Sequence[CalibrationRecord]) -> None:
    """Append ``new`` to the list in ``path``, replacing the file atomically and durably
    (``mir.storage.write_atomic``: a crash leaves the old list or the new one, never half
    of it)."""
    records = [*read_calibrations(path), *new]
    text = json.dumps([r.model_dump(mode="json") for r in records], indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def gating(
    identity: JudgeIdentity, settings: JudgeSettings, suite_dir: Path
) -> tuple[bool, str | None]:
    """Whether this judge's assertions gate, and why not: always without ``min_kappa``;
    with it, only when the latest calibration of this model + prompt hash reached it
    (every kind calibrated: rubric and pairwise each count)."""
    minimum = settings.min_kappa
    if minimum is None:
        return True, None
    path = suite_dir / settings.calibration
    who = f"model {identity.model_label}, prompt {identity.prompt_hash}"
    how = f"run `mir eval calibrate LABELS.jsonl` (records go to {path.name} beside it)"
    try:
        records = read_calibrations(path)
    except ConfigError as exc:
        return False, f"judge not calibrated: {exc}; {how}"
    latest = latest_calibrations(records, identity.model_label, identity.prompt_hash)
    if not latest:
        return False, f"judge not calibrated: no calibration of {who} in {path}; {how}"
    for record in latest:
        if record.kappa is None or record.kappa < minimum:
            kappa = "undefined" if record.kappa is None else f"{record.kappa:.2f}"
            return False, (
                f"judge not calibrated: {record.kind} kappa {kappa} < min_kappa "
                f"{minimum:g} ({who}); {how}"
            )
    return True, None
