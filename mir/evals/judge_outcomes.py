"""What the judge said about one answer (a rubric grade) or one pair (a comparison)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["win", "tie", "loss"]
# What the candidate scores for each pairwise outcome (reported, never gated on).
OUTCOME_SCORE: dict[str, float] = {"win": 1.0, "tie": 0.5, "loss": 0.0}


@dataclass(frozen=True)
class GradeOutcome:
    """One rubric grading: the verdict, or why there is none (``problem``)."""

    verdict: str | None
    score: float | None
    reason: str | None
    flow_id: str
    problem: str | None = None

    def passes(self, min_score: float) -> bool:
        """What a rubric assertion and a calibration both count as the judge's "pass":
        the verdict says pass AND the score reaches ``min_score``. One rule for both, so
        the kappa a calibration measures is the kappa of what gates (a small model
        answers "pass" with score 0; that is not a pass)."""
        return self.verdict == "pass" and self.score is not None and self.score >= min_score


@dataclass(frozen=True)
class PairOutcome:
    """A pairwise comparison asked in both orders, from the candidate's side."""

    outcome: Outcome | None  # after the swap rule: a flip is a tie
    consistent: bool | None  # both orders named the same winner
    first: str | None  # verdict with the candidate as A
    second: str | None  # verdict with the candidate as B
    reasons: tuple[str, str]
    flow_ids: tuple[str, str]
    problem: str | None = None
