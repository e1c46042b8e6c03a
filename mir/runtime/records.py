"""What a decision flow produces: reason codes, verdicts and the decision record.

Reason codes are stable strings (they land in traces, drift monitors count them and
users grep for them), so they are an ``Enum`` of ``str`` and never renamed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FlowStatus = Literal[
    "executed", "rejected", "pending_review", "fallback", "stale", "aborted", "expired"
]


class ReasonCode(StrEnum):
    # the model's output itself (a retry with the errors fed back may fix these)
    NOT_JSON = "not_json"
    TRUNCATED = "truncated"
    OUTPUT_TOO_LARGE = "output_too_large"
    INVALID_UTF8 = "invalid_utf8"
    SCHEMA_INVALID = "schema_invalid"
    EXTRA_FIELD = "extra_field"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    ACTION_NOT_ALLOWED = "action_not_allowed"
    LIMIT_EXCEEDED = "limit_exceeded"
    CONFIDENCE_INVALID = "confidence_invalid"
    # the caller, the clock, the budget, the agent's state (retrying cannot fix these)
    ROLE_NOT_ALLOWED = "role_not_allowed"
    TTL_EXPIRED = "ttl_expired"
    BUDGET_EXCEEDED = "budget_exceeded"
    AGENT_SUSPENDED = "agent_suspended"
    PROVIDER_ERROR = "provider_error"
    # routing, review, re-check and execution
    LOW_CONFIDENCE = "low_confidence"
    NO_CONSENSUS = "no_consensus"
    RETRIES_EXHAUSTED = "retries_exhausted"
    NO_FALLBACK_RULE = "no_fallback_rule"
    STATE_CHANGED = "state_changed"
    RECHECK_FAILED = "recheck_failed"
    REJECTED_BY_REVIEWER = "rejected_by_reviewer"
    ALREADY_EXECUTED = "already_executed"
    EXECUTION_IN_DOUBT = "execution_in_doubt"
    EXECUTOR_ERROR = "executor_error"
    # added later (appended, never reordered): hostile shapes, caller input, bindings
    TOO_DEEP = "too_deep"
    NUMBER_TOO_LARGE = "number_too_large"
    INPUT_INVALID = "input_invalid"
    BINDING_VIOLATED = "binding_violated"
    CONTEXT_UNAVAILABLE = "context_unavailable"
    DECISION_REDACTED = "decision_redacted"
    # back-pressure refused the model call (queue full, displaced, deadline): rules decide
    SHED = "shed"
    # a model file whose sha256 is not the registry's (refused before load)
    MODEL_INTEGRITY = "model_integrity"
    PII_BLOCKED = "pii_blocked"
    # the fleet store (Postgres) could not be reached: failed closed, nothing executed
    STORE_UNAVAILABLE = "store_unavailable"
    # the process deciding it was killed before the flow reached an outcome, and before
    # it claimed any execution: closed as aborted by the next batch run, nothing executed
    INTERRUPTED = "interrupted"
    # a submitted flow the worker could not decide (its agent does not load on the
    # worker's host, or an error outside the flow): aborted, nothing executed
    WORKER_ERROR = "worker_error"


RETRYABLE: frozenset[ReasonCode] = frozenset(
    {
        ReasonCode.NOT_JSON,
        ReasonCode.TRUNCATED,
        ReasonCode.OUTPUT_TOO_LARGE,
        ReasonCode.INVALID_UTF8,
        ReasonCode.SCHEMA_INVALID,
        ReasonCode.EXTRA_FIELD,
        ReasonCode.MISSING_FIELD,
        ReasonCode.WRONG_TYPE,
        ReasonCode.ACTION_NOT_ALLOWED,
        ReasonCode.LIMIT_EXCEEDED,
        ReasonCode.CONFIDENCE_INVALID,
        ReasonCode.TOO_DEEP,
        ReasonCode.NUMBER_TOO_LARGE,
        # A parameter outside what the input/world allows: the model may fix it (the
        # message names the bound), and past the budget the rules decide.
        ReasonCode.BINDING_VIOLATED,
    }
)


class Problem(BaseModel):
    """One failed check: a stable code plus a message the model can act on in a retry."""

    model_config = ConfigDict(frozen=True)

    code: ReasonCode
    message: str
    field: str | None = None


class Verdict(BaseModel):
    """The integrity check's answer. ``decision`` is set only when ``ok``."""

    model_config = ConfigDict(frozen=True)

    problems: tuple[Problem, ...] = ()
    decision: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.decision is not None

    @property
    def reasons(self) -> list[str]:
        return list(dict.fromkeys(p.code.value for p in self.problems))

    @property
    def retryable(self) -> bool:
        return bool(self.problems) and all(p.code in RETRYABLE for p in self.problems)


class DecisionRecord(BaseModel):
    """The outcome of one flow: what ``mir run agent --json`` prints and ``decide`` returns."""

    model_config = ConfigDict(frozen=True)

    flow_id: str
    agent: str
    status: FlowStatus
    decision: dict[str, Any] | None = None
    action: str | None = None
    executed: bool = False
    reasons: list[str] = Field(default_factory=list)
    provider: str | None = None
    model: str | None = None
    latency_ms: float = 0.0
    tokens: int = 0
    # Why a caller's input was refused ("input.<root>: 'id' is a required property"):
    # the caller has something to fix. Also in the flow's validate event; kept out of
    # the record's JSON so ``--json`` and the final event keep their shape.
    problems: list[str] = Field(default_factory=list, exclude=True)
    # Who approved or rejected it, when (ISO): set by a review, shown by the CLI; kept
    # out of the record's JSON for the same reason.
    reviewed_by: str | None = Field(None, exclude=True)
    reviewed_at: str | None = Field(None, exclude=True)

    @property
    def ended_as_designed(self) -> bool:
        """Exit 0 for every designed outcome (even rejected or pending); 1 for aborted
        and for a caller input the contract refuses (the caller has something to fix)."""
        return self.status != "aborted" and ReasonCode.INPUT_INVALID.value not in self.reasons
