"""When a decision waits for a human: the contract's ``review`` section.

The model's own confidence is one signal among several, and the only one the model
controls. The others are deterministic: named rules (``when``) in the condition
language of the fallback rules, actions that always wait (``always``) and an additive
risk score (``risk``). A flow waits for a human when any of them fires; the reasons of
the pending flow name what fired (``review_rule:<name>``, ``review_always:<action>``,
``review_risk:<score>/<threshold>``, ``low_confidence``). Evaluating them is the
runtime's job (``mir.runtime.review_rules``); which fields a condition may name is
checked against the contract's schemas when the agent loads.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

# What a condition (fallback rule, review rule, risk factor) may compare a field with.
ConditionOp = Literal["==", "!=", "<", "<=", ">", ">=", "in", "not in"]

# Roots a review condition may name: the caller's input, the world, the proposal, and
# the proposal's action itself (``action``).
REVIEW_ROOTS: tuple[str, ...] = ("input", "context", "decision")

# Bounds a score's terms: a sum of any number of them stays a finite float.
MAX_WEIGHT = 1e6

# A rule's or a factor's name ends up in a reason string and in the traces.
RuleName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleCondition(_Strict):
    """One comparison; a rule's conditions must all hold. A field that is missing, or a
    comparison that cannot apply (text against a number), does not hold."""

    field: str = Field(
        description="Dotted path: 'input.amount', 'context.customer_tier'; in review "
        "conditions also 'decision.amount' and 'action' (the proposal's action)."
    )
    op: ConditionOp
    value: Any


class ReviewRule(_Strict):
    """A deterministic reason for a human to look first, whatever the confidence."""

    name: RuleName = Field(description="Named in the pending flow's reasons: review_rule:<name>.")
    conditions: list[RuleCondition] = Field(min_length=1, description="All must hold.")


class RiskFactor(_Strict):
    name: RuleName
    weight: float = Field(
        ge=-MAX_WEIGHT,
        le=MAX_WEIGHT,
        description="Added to the score when all its conditions hold (may be negative).",
    )
    conditions: list[RuleCondition] = Field(min_length=1, description="All must hold.")


class Risk(_Strict):
    """An additive score: the weights of the factors that hold, summed (rounded to 6
    decimals); at or above the threshold the flow waits (review_risk:<score>/<threshold>)."""

    threshold: float = Field(gt=0, le=MAX_WEIGHT)
    factors: list[RiskFactor] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct_names(self) -> Risk:
        _distinct([f.name for f in self.factors], "risk factor")
        return self


class Review(_Strict):
    """When a human approves first (``mir approve FLOW_ID``): any of these firing."""

    confidence_threshold: float = Field(
        0.7, ge=0, le=1, description="Below this confidence a human approves first."
    )
    always: list[str] = Field(
        default_factory=list, description="Actions that always wait for a human."
    )
    when: list[ReviewRule] = Field(
        default_factory=list,
        description="Named rules over input.*, context.*, decision.* and action; any rule "
        "whose conditions all hold sends the flow to review.",
    )
    risk: Risk | None = Field(None, description="Optional additive risk score.")
    remind_after: int | None = Field(
        None, gt=0, description="Seconds a flow may wait before its reviewers are reminded."
    )

    @model_validator(mode="after")
    def _distinct_names(self) -> Review:
        _distinct([r.name for r in self.when], "review rule")
        _distinct(self.always, "action in review.always")
        return self


def _distinct(names: list[str], what: str) -> None:
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise ValueError(f"{what} {twice[0]!r} is listed twice")
