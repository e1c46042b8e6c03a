"""judge: what the judge reads (a graded answer, a pair of answers) and what it proposes.

Standard library + pydantic only. The decision models are the judge agents' decision
schemas: constrained decoding follows their field order, so the reason comes first and
the verdict is written after the judge has said why (a verdict first would be a guess the
reason then rationalises). Strings are bounded: a rambling judge fails validation and is
asked again instead of filling a report.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

GradeVerdict = Literal["pass", "fail"]
PairVerdict = Literal["A", "B", "tie"]


class GradeRequest(BaseModel):
    """One answer to grade against a rubric (the grade agent's input)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rubric: str = Field(min_length=1, max_length=2000)
    input: dict[str, Any] = Field(description="What the graded agent was asked.")
    context: dict[str, Any] | None = Field(None, description="The world it decided in.")
    answer: Any = Field(description="What it answered: its decision, or one field of it.")


class CompareRequest(BaseModel):
    """Two answers to the same input, to compare on criteria (the compare agent's input).

    Which answer sits in position A is the caller's choice: mir asks twice with the
    positions swapped, so a judge that prefers a position cannot decide the outcome.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    criteria: str = Field(min_length=1, max_length=2000)
    input: dict[str, Any]
    context: dict[str, Any] | None = None
    a: Any
    b: Any


class Grade(BaseModel):
    """The grade agent's decision: does the answer meet the rubric, and how well."""

    reason: str = Field(max_length=120)
    verdict: GradeVerdict
    score: float = Field(ge=0, le=1, description="0: misses the rubric entirely, 1: fully.")
    confidence: float = Field(ge=0, le=1)


class Preference(BaseModel):
    """The compare agent's decision: which answer is better on the criteria."""

    reason: str = Field(max_length=120)
    verdict: PairVerdict
    confidence: float = Field(ge=0, le=1)
