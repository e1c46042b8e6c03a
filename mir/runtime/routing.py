"""Routing a valid proposal (pipeline step 4): review, cascade, ensemble vote.

Pure decisions over numbers the contract declares, so they are testable without a
model: when a review rule fires or the confidence is below the review threshold a human
approves first (``review_rules``); an invalid or low-confidence
answer from one route may move the flow to the next route (local -> remote); N routes
vote on the action and their agreement scales the confidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mir.contracts import AgentContract
from mir.runtime.review_rules import confidence_below, review_reasons


def confidence_of(decision: Mapping[str, Any], contract: AgentContract) -> float:
    return float(decision.get(contract.decision.confidence_field, 0.0))


def needs_review(
    decision: Mapping[str, Any],
    contract: AgentContract,
    input: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> list[str]:
    """Why this proposal waits for a human (empty: it does not): the contract's review
    rules, ``always`` actions, risk score and confidence threshold (``review_rules``)."""
    return review_reasons(decision, contract, input, context)


def cascade_reason(
    decision: Mapping[str, Any] | None,
    contract: AgentContract,
    *,
    provider_failed: bool,
    has_next: bool,
) -> str | None:
    """Why the flow should try the next route, or None to stay with this answer.

    A provider that could not answer at all always moves on (local first, remote
    fallback); invalid or low-confidence answers move on only when the contract says so.
    """
    if not has_next:
        return None
    if decision is None:
        if provider_failed:
            return "provider_error"
        return "invalid" if "invalid" in contract.cascade_on else None
    # the model's confidence alone: a review rule holds whichever route answers
    if "low_confidence" in contract.cascade_on and confidence_below(decision, contract):
        return "low_confidence"
    return None


@dataclass(frozen=True)
class Vote:
    decision: dict[str, Any] | None
    agreement: float  # share of ALL routes (invalid ones count against) behind the action
    consensus: bool


def vote(
    decisions: Sequence[Mapping[str, Any] | None], contract: AgentContract, min_agreement: float
) -> Vote:
    """Majority action; ties go to the earliest route (deterministic). The winning
    decision is the first one with that action, its confidence the mean confidence of
    the agreeing routes scaled by the agreement ratio."""
    action_field = contract.decision.action_field
    valid = [d for d in decisions if d is not None]
    if not decisions or not valid:
        return Vote(decision=None, agreement=0.0, consensus=False)
    counts = Counter(d[action_field] for d in valid)
    order = {d[action_field]: i for i, d in reversed(list(enumerate(valid)))}
    winner = max(counts, key=lambda a: (counts[a], -order[a]))
    agreeing = [d for d in valid if d[action_field] == winner]
    agreement = len(agreeing) / len(decisions)
    mean = sum(confidence_of(d, contract) for d in agreeing) / len(agreeing)
    decision = dict(agreeing[0])
    decision[contract.decision.confidence_field] = round(mean * agreement, 6)
    return Vote(decision=decision, agreement=agreement, consensus=agreement >= min_agreement)
