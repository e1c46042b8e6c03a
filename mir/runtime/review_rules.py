"""Whether a valid proposal waits for a human, and why (pure, no I/O).

The contract's ``review`` section names deterministic reasons (rules, actions that
always wait, a risk score) beside the model's confidence. ``review_reasons`` returns
every reason that fires, in a fixed order, as the strings the pending flow's route
event and record carry:

- ``review_rule:<name>`` for each rule of ``review.when`` whose conditions all hold,
  in the contract's order;
- ``review_always:<action>`` when the action is in ``review.always``;
- ``review_risk:<score>/<threshold>`` (two decimals) when the weights of the factors
  that hold, summed and rounded to 6 decimals, reach the threshold;
- ``low_confidence`` when the confidence is below ``confidence_threshold``.

An empty list: the proposal goes on to execution. Conditions are evaluated with the
fallback rules' evaluator (``rules.holds``) over ``input.*``, ``context.*``,
``decision.*`` and ``action``; a missing field or a comparison that cannot apply does
not hold (which fields a condition names is checked at load: ``review_checks``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mir.contracts import AgentContract, RuleCondition
from mir.runtime.records import ReasonCode
from mir.runtime.rules import holds

RULE_PREFIX = "review_rule:"
ALWAYS_PREFIX = "review_always:"
RISK_PREFIX = "review_risk:"


def review_scope(
    decision: Mapping[str, Any],
    contract: AgentContract,
    input: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a review condition's ``field`` is looked up in."""
    return {
        "input": input if input is not None else {},
        "context": context if context is not None else {},
        "decision": decision,
        "action": decision.get(contract.decision.action_field),
    }


def confidence_below(decision: Mapping[str, Any], contract: AgentContract) -> bool:
    """The model's (or the vote's) confidence alone is below the review threshold."""
    confidence = decision.get(contract.decision.confidence_field, 0.0)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return True  # not a number (the integrity check refuses it first): not confident
    return not confidence >= contract.review.confidence_threshold  # NaN is not confident


def risk_score(conditions: Sequence[tuple[float, Sequence[RuleCondition]]], scope: Any) -> float:
    """Sum of the weights whose conditions all hold, rounded to 6 decimals (so that
    0.7 + 0.2 + 0.1 reaches a threshold of 1.0)."""
    held = [weight for weight, when in conditions if all(holds(c, scope) for c in when)]
    return round(math.fsum(held), 6)


def review_reasons(
    decision: Mapping[str, Any],
    contract: AgentContract,
    input: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> list[str]:
    """Every reason this proposal waits for a human, in the documented order."""
    review = contract.review
    scope = review_scope(decision, contract, input, context)
    reasons = [
        f"{RULE_PREFIX}{rule.name}"
        for rule in review.when
        if all(holds(c, scope) for c in rule.conditions)
    ]
    action = scope["action"]
    if isinstance(action, str) and action in review.always:
        reasons.append(f"{ALWAYS_PREFIX}{action}")
    if review.risk is not None:
        factors = [(f.weight, f.conditions) for f in review.risk.factors]
        score = risk_score(factors, scope)
        if score >= review.risk.threshold:
            reasons.append(f"{RISK_PREFIX}{score:.2f}/{review.risk.threshold:.2f}")
    if confidence_below(decision, contract):
        reasons.append(ReasonCode.LOW_CONFIDENCE.value)
    return reasons
