from __future__ import annotations

import pytest

from mir.contracts import RuleCondition
from mir.runtime.routing import cascade_reason, needs_review, vote
from mir.runtime.rules import holds, matching_rule, rule_decision
from tests.unit.runtime.fakes import contract


def scope(**input):
    return {"input": input, "context": {"tier": "gold"}}


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [("<=", 20, True), (">", 20, False), ("in", [10, 20], True), ("not in", [10], False)],
)
def test_conditions(op, value, expected):
    assert (
        holds(RuleCondition(field="input.amount", op=op, value=value), scope(amount=10)) is expected
    )


def test_missing_fields_and_incomparable_types_do_not_match():
    assert not holds(RuleCondition(field="input.nope", op="==", value=1), scope())
    assert not holds(RuleCondition(field="input.amount", op="<", value=5), scope(amount="abc"))


def test_first_matching_rule_then_default():
    c = contract()
    assert matching_rule(c.fallback, scope(amount=10))[0] == 0
    index, rule = matching_rule(c.fallback, scope(amount=100))
    assert index == "default" and rule.action == "escalate"
    assert matching_rule(contract(fallback={}).fallback, scope(amount=1)) is None


def test_rule_params_reference_the_input():
    c = contract()
    _, rule = matching_rule(c.fallback, scope(amount=10))
    assert rule_decision(rule, c.decision, scope(amount=10)) == {
        "action": "refund",
        "confidence": 1.0,
        "amount": 10,
        "reason": "small",
    }


def test_review_threshold():
    c = contract()
    assert needs_review({"confidence": 0.69}, c)
    assert not needs_review({"confidence": 0.7}, c)


def test_cascade_only_as_configured():
    plain, both = contract(), contract(cascade_on=["invalid", "low_confidence"])
    low = {"confidence": 0.1}
    assert cascade_reason(None, plain, provider_failed=False, has_next=True) is None
    assert cascade_reason(None, plain, provider_failed=True, has_next=True) == "provider_error"
    assert cascade_reason(None, both, provider_failed=False, has_next=True) == "invalid"
    assert cascade_reason(low, both, provider_failed=False, has_next=True) == "low_confidence"
    assert cascade_reason(low, plain, provider_failed=False, has_next=True) is None
    assert cascade_reason(None, both, provider_failed=True, has_next=False) is None


def d(action, confidence=0.9):
    return {"action": action, "confidence": confidence, "amount": 1, "reason": "r"}


def test_majority_vote_scales_confidence_by_agreement():
    result = vote([d("refund", 0.9), d("refund", 0.6), d("deny")], contract(), 0.5)
    assert result.decision["action"] == "refund"
    assert result.agreement == pytest.approx(2 / 3)
    assert result.decision["confidence"] == pytest.approx(0.75 * 2 / 3, abs=1e-6)
    assert result.consensus


def test_invalid_votes_count_against_and_ties_go_to_the_first_route():
    result = vote([d("deny"), d("refund"), None], contract(), 0.5)
    assert result.decision["action"] == "deny"
    assert result.agreement == pytest.approx(1 / 3)
    assert not result.consensus
    assert vote([None, None], contract(), 0.5).decision is None
