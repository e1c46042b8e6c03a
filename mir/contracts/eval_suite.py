"""The eval suite format: ``capabilities/<cap>/evals/<agent>.yaml``.

A suite is a list of cases; a case is an input (and optional world state) plus
assertions in four tiers, each checked against what the real decision pipeline did:

- **deterministic**: ``equals`` / ``contains`` / ``regex`` / ``one_of`` / ``range`` on a
  decision field (dotted ``path`` into the decision), ``status`` (the flow's final
  status) and ``reason`` (a reason code on the record, or a review reason such as
  ``review_rule:<name>``);
- **schema**: ``schema_valid`` (a proposal parsed and validated against the contract's
  decision schema), ``action_allowed`` (the action exists and the role may trigger it),
  ``integrity_passed`` (the integrity check accepted the decision);
- **judge**: ``rubric`` (the built-in judge grades the decision against a rubric) and
  ``pairwise`` (the judge compares the decision with a reference, or with the
  baseline's decision, positions swapped);
- **trajectory**: ``retries``, ``fallback``, ``route``, ``cascaded``,
  ``review_requested``, ``stale``, ``tokens``, ``latency_ms``: read from the flow's
  trace events.

``expect: {action: refund, status: executed}`` (what ``mir new agent`` writes) is
shorthand: ``status`` is a ``status`` assertion, every other key an ``equals`` on that
decision field. Everything here is data; checking it against a contract before any
model call and evaluating it after the flow are ``mir.evals``' job.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Runs of one case: enough for pass^k / pass@k and flaky detection; a typo of a few
# zeros must not queue a billion model calls.
MAX_REPEAT = 100

FlowStatusName = Literal["executed", "rejected", "pending_review", "fallback", "stale", "aborted"]
Tier = Literal["deterministic", "schema", "judge", "trajectory"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Assertion(_Strict):
    tier: ClassVar[Tier]
    gate: bool = Field(
        True, description="False: reported, but a failure does not fail the case (a probe)."
    )


# --------------------------------------------------------------------- deterministic
class _Deterministic(_Assertion):
    tier: ClassVar[Tier] = "deterministic"


class _OnPath(_Deterministic):
    path: str = Field(
        min_length=1, description="Dotted path into the decision: 'action', 'refund.amount'."
    )


class Equals(_OnPath):
    type: Literal["equals"]
    value: Any


class Contains(_OnPath):
    type: Literal["contains"]
    value: Any = Field(description="A substring of a text field, or an item of a list field.")


class Regex(_OnPath):
    type: Literal["regex"]
    pattern: str = Field(
        description="RE2 regular expression (linear time: no lookarounds or backreferences), "
        "searched anywhere in the text."
    )


class OneOf(_OnPath):
    type: Literal["one_of"]
    values: list[Any] = Field(min_length=1)


class Range(_OnPath):
    type: Literal["range"]
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> Range:
        if self.min is None and self.max is None:
            raise ValueError("set 'min' and/or 'max'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min}) is above 'max' ({self.max})")
        return self


class Status(_Deterministic):
    type: Literal["status"]
    value: FlowStatusName | list[FlowStatusName] = Field(
        description="The flow's final status, or a list of accepted ones."
    )


class Reason(_Deterministic):
    type: Literal["reason"]
    value: str = Field(
        description="A reason the record carries: a reason code, e.g. 'input_invalid', or "
        "what sent it to review, e.g. 'review_rule:<name>' (a rule of the contract's "
        "review.when), 'review_always:<action>'."
    )
    present: bool = Field(True, description="False: the record must NOT carry it.")


# --------------------------------------------------------------------- schema and action
class _Schema(_Assertion):
    tier: ClassVar[Tier] = "schema"


class SchemaValid(_Schema):
    type: Literal["schema_valid"]
    attempt: Literal["first", "any"] = Field(
        "any", description="'first': the first proposal was valid (no retry needed)."
    )


class ActionAllowed(_Schema):
    type: Literal["action_allowed"]


class IntegrityPassed(_Schema):
    type: Literal["integrity_passed"]


# --------------------------------------------------------------------- judge
class _Judge(_Assertion):
    tier: ClassVar[Tier] = "judge"


class Rubric(_Judge):
    type: Literal["rubric"]
    rubric: str = Field(min_length=1, description="What a good decision does, in words.")
    path: str | None = Field(
        None, description="Grade only this decision field (default: the whole decision)."
    )
    min_score: float = Field(0.5, ge=0, le=1, description="Pass at or above this score.")


class Pairwise(_Judge):
    type: Literal["pairwise"]
    criteria: str = Field(min_length=1, description="What makes one decision better.")
    against: Literal["reference", "baseline"] = "reference"
    reference: dict[str, Any] | None = Field(
        None, description="The reference decision (when against: reference)."
    )
    accept: list[Literal["win", "tie"]] = Field(
        default_factory=lambda: ["win", "tie"],
        description="Outcomes for the candidate that pass (a loss never does).",
    )

    @model_validator(mode="after")
    def _reference_given(self) -> Pairwise:
        if self.against == "reference" and self.reference is None:
            raise ValueError("against: reference needs a 'reference' decision")
        if self.against == "baseline" and self.reference is not None:
            raise ValueError("against: baseline uses the baseline's decision; drop 'reference'")
        return self


# --------------------------------------------------------------------- trajectory
class _Trajectory(_Assertion):
    tier: ClassVar[Tier] = "trajectory"


class Retries(_Trajectory):
    type: Literal["retries"]
    max: int = Field(ge=0, description="At most this many re-asks after invalid output.")


class _Flag(_Trajectory):
    value: bool = True


class FallbackUsed(_Flag):
    type: Literal["fallback"]


class Cascaded(_Flag):
    type: Literal["cascaded"]


class ReviewRequested(_Flag):
    type: Literal["review_requested"]


class Stale(_Flag):
    type: Literal["stale"]


class RouteUsed(_Trajectory):
    type: Literal["route"]
    value: str = Field(description="A route (name, or provider when unnamed) the flow used.")
    used: bool = Field(True, description="False: the flow must NOT have used it.")


class Tokens(_Trajectory):
    type: Literal["tokens"]
    max: int = Field(ge=0, description="Prompt + completion tokens over the whole flow.")


class LatencyMs(_Trajectory):
    type: Literal["latency_ms"]
    max: float = Field(ge=0, description="Model latency summed over the flow, in ms.")


Assertion = Annotated[
    Equals
    | Contains
    | Regex
    | OneOf
    | Range
    | Status
    | Reason
    | SchemaValid
    | ActionAllowed
    | IntegrityPassed
    | Rubric
    | Pairwise
    | Retries
    | FallbackUsed
    | Cascaded
    | ReviewRequested
    | Stale
    | RouteUsed
    | Tokens
    | LatencyMs,
    Field(discriminator="type"),
]
# 'equals' -> 'deterministic', ...: the tier of every assertion type
ASSERTION_TIERS: dict[str, Tier] = {
    get_args(kind.model_fields["type"].annotation)[0]: kind.tier
    for kind in get_args(get_args(Assertion)[0])
}


class EvalCase(_Strict):
    id: str = Field(min_length=1, description="Unique in the suite; baselines key on it.")
    input: dict[str, Any]
    context: dict[str, Any] | None = Field(
        None,
        description="The world state for this case (replaces the contract's context loader).",
    )
    role: str = "agent"
    tags: list[str] = Field(
        default_factory=list, description="Free labels; 'critical': a break fails the gate."
    )
    repeat: int | None = Field(
        None, ge=1, le=MAX_REPEAT, description="Runs of this case (default: the suite's)."
    )
    expect: dict[str, Any] = Field(
        default_factory=dict,
        description="Shorthand: {status: executed} is a status assertion, any other key an "
        "equals on that decision field, e.g. {action: refund, status: executed}.",
    )
    assertions: list[Assertion] = Field(
        default_factory=list, alias="assert", description="Assertions in the four tiers."
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def critical(self) -> bool:
        return "critical" in self.tags


class JudgeSettings(_Strict):
    """The built-in judge (``capabilities/judge``) for this suite's judge assertions."""

    provider: Literal["llama", "litellm", "scripted"] | None = Field(
        None, description="Default: the project's [tool.mir.model] provider."
    )
    model: str | None = Field(None, description="llama: 'default' or a .gguf; litellm: an id.")
    api_base: str | None = None
    api_key_env: str | None = None
    responses: str | None = Field(
        None, description="scripted: JSONL of the judge's raw outputs (relative to the suite)."
    )
    min_kappa: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="Judge assertions gate only when the judge's last calibration "
        "(same model and prompt) reached this Cohen's kappa.",
    )
    calibration: str = Field(
        "judge-calibration.json",
        description="Calibration record written by `mir eval calibrate` (relative to the suite).",
    )


class EvalSuite(_Strict):
    agent: str = Field(description="The agent under test: 'triage' or 'capability.agent'.")
    description: str = ""
    repeat: int = Field(
        1, ge=1, le=MAX_REPEAT, description="Runs per case (pass^k / pass@k over them)."
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="McNemar significance level for the baseline gate."
    )
    min_pass_rate: float | None = Field(
        None, ge=0, le=1, description="Fail the gate below this share of passing case runs."
    )
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    cases: list[EvalCase] = Field(default_factory=list)

    @field_validator("cases")
    @classmethod
    def _unique_ids(cls, cases: list[EvalCase]) -> list[EvalCase]:
        # on the `cases` field (not the whole suite), so the error has a line to point at
        first: dict[str, int] = {}
        for index, case in enumerate(cases):
            if case.id in first:
                raise ValueError(
                    f"duplicate case id {case.id!r} (cases[{first[case.id]}] and "
                    f"cases[{index}]); give each case its own id (baselines and reports key on it)"
                )
            first[case.id] = index
        return cases
