"""Review rules: which deterministic reasons send a proposal to a human, in which order,
through the real DecisionFlow; the model's confidence is one factor among them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.runtime.flow import DecisionFlow
from mir.runtime.review_rules import review_reasons
from mir.runtime.routing import cascade_reason, needs_review
from tests.unit.runtime.fakes import World, contract, harness

INPUT = {"order_id": "A1", "amount": 40, "message": "arrived broken"}
EXPENSIVE = {
    "name": "expensive_refund",
    "conditions": [
        {"field": "action", "op": "==", "value": "refund"},
        {"field": "decision.amount", "op": ">", "value": 100},
    ],
}


def proposal(**changes: Any) -> dict[str, Any]:
    return {"action": "refund", "confidence": 0.99, "amount": 149, "reason": "x", **changes}


def test_a_rule_fires_whatever_the_confidence():
    c = contract(review={"when": [EXPENSIVE]})
    assert review_reasons(proposal(), c) == ["review_rule:expensive_refund"]
    assert review_reasons(proposal(amount=30), c) == []
    assert review_reasons(proposal(amount=100), c) == []  # "> 100": 100 itself is paid
    assert review_reasons(proposal(action="escalate"), c) == []


def cond(field: str, op: str, value: Any) -> list[dict[str, Any]]:
    return [{"field": field, "op": op, "value": value}]


def test_every_reason_in_the_documented_order():
    c = contract(
        review={
            "confidence_threshold": 0.7,
            "always": ["refund"],
            "when": [
                {"name": "b_rule", "conditions": cond("input.amount", ">=", 40)},
                {"name": "a_rule", "conditions": cond("context.total", "<", 100)},
            ],
            "risk": {
                "threshold": 1.0,
                "factors": [
                    {"name": "big", "weight": 0.6, "conditions": cond("decision.amount", ">", 50)},
                    {"name": "new", "weight": 0.5, "conditions": cond("context.total", "==", 80)},
                ],
            },
        }
    )
    reasons = review_reasons(proposal(confidence=0.2), c, INPUT, {"total": 80})
    assert reasons == [
        "review_rule:b_rule",  # the contract's order, not the alphabet
        "review_rule:a_rule",
        "review_always:refund",
        "review_risk:1.10/1.00",
        "low_confidence",
    ]


def test_the_risk_score_is_rounded_before_the_threshold():
    factors = [
        {"name": n, "weight": w, "conditions": [{"field": "action", "op": "==", "value": "refund"}]}
        for n, w in (("a", 0.7), ("b", 0.2), ("c", 0.1))
    ]
    c = contract(review={"risk": {"threshold": 1.0, "factors": factors}})
    assert 0.7 + 0.2 + 0.1 < 1.0  # the float sum alone would miss it
    assert review_reasons(proposal(), c) == ["review_risk:1.00/1.00"]


def test_a_missing_field_or_a_comparison_that_cannot_apply_does_not_hold():
    rule = {"name": "r", "conditions": [{"field": "context.tier", "op": ">", "value": 3}]}
    c = contract(review={"when": [rule]})
    assert review_reasons(proposal(), c, INPUT, {}) == []
    assert review_reasons(proposal(), c, INPUT, {"tier": "gold"}) == []
    assert review_reasons(proposal(), c, INPUT, {"tier": 4}) == ["review_rule:r"]


def test_cascade_on_low_confidence_still_means_the_confidence_alone():
    c = contract(review={"when": [EXPENSIVE]}, cascade_on=["low_confidence"])
    assert needs_review(proposal(), c) == ["review_rule:expensive_refund"]
    assert cascade_reason(proposal(), c, provider_failed=False, has_next=True) is None
    low = proposal(confidence=0.1)
    assert cascade_reason(low, c, provider_failed=False, has_next=True) == "low_confidence"


def test_the_pending_route_event_and_the_record_carry_the_reasons():
    answer = json.dumps(proposal())
    h = harness([answer], review={"when": [EXPENSIVE]})
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    assert (record.status, record.executed) == ("pending_review", False)
    assert record.reasons == ["review_rule:expensive_refund"]
    route = [e for e in h.traces.flow(record.flow_id) if e.step == "route"][-1]
    assert route.status == "pending_review"
    assert list(route.reasons) == route.data["reasons"] == ["review_rule:expensive_refund"]
    assert h.executions.calls == []


def test_a_fallback_decision_is_held_by_the_rules_too():
    # past the retry budget the rules decide; their confidence is 1.0, the rule still holds
    rule = {"name": "small_too", "conditions": [{"field": "input.amount", "op": "<=", "value": 20}]}
    h = harness(["x", "x", "x"], review={"when": [rule]})
    record = DecisionFlow(h.parts, h.deps).decide({**INPUT, "amount": 15})
    assert record.status == "pending_review" and "review_rule:small_too" in record.reasons
    assert h.executions.calls == []


def test_the_rules_see_the_whole_world_not_only_the_prompts_scope():
    rule = {"name": "flagged", "conditions": [{"field": "context.flag", "op": "==", "value": True}]}
    world = World(state={"total": 80, "flag": True})
    h = harness([json.dumps(proposal(amount=40))], world=world, review={"when": [rule]})
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    assert record.reasons == ["review_rule:flagged"]


def test_an_ensemble_without_consensus_still_waits():
    ensemble = {"routes": ["local", "remote"], "min_agreement": 1.0}
    h = harness(
        [json.dumps(proposal(amount=40))],
        remote=[json.dumps(proposal(action="escalate", amount=0))],
        ensemble=ensemble,
        review={"when": [EXPENSIVE]},
    )
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    assert record.status == "pending_review"
    assert record.reasons[-2:] == ["no_consensus", "low_confidence"]


# --------------------------------------------------------------------------- property
FIELDS = ["action", "decision.amount", "decision.confidence", "input.amount", "context.total"]
OPS = ["==", "!=", "<", "<=", ">", ">="]
ACTIONS = ["refund", "deny", "escalate"]


def _value(field: str) -> st.SearchStrategy[Any]:
    if field == "action":
        return st.sampled_from(ACTIONS)
    if field == "decision.confidence":
        return st.sampled_from([0.0, 0.3, 0.7, 0.95, 1.0])
    return st.integers(min_value=0, max_value=300)


conditions = st.sampled_from(FIELDS).flatmap(
    lambda f: st.fixed_dictionaries(
        {"field": st.just(f), "op": st.sampled_from(OPS), "value": _value(f)}
    )
)
decisions = st.fixed_dictionaries(
    {
        "action": st.sampled_from(ACTIONS),
        "confidence": st.sampled_from([0.0, 0.3, 0.69, 0.7, 0.95, 1.0]),
        "amount": st.integers(min_value=0, max_value=300),
        "reason": st.just("r"),
    }
)


def _oracle_holds(condition: dict[str, Any], values: dict[str, Any]) -> bool:
    """An independent reading of one condition (all values here are comparable)."""
    left, right = values[condition["field"]], condition["value"]
    if type(left) is not type(right) and not all(isinstance(v, int | float) for v in (left, right)):
        return condition["op"] == "!="  # "refund" != 3 holds; every ordering fails
    return {
        "==": left == right, "!=": left != right, "<": left < right,
        "<=": left <= right, ">": left > right, ">=": left >= right,
    }[condition["op"]]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    decision=decisions,
    amount=st.integers(min_value=0, max_value=300),
    total=st.integers(min_value=0, max_value=300),
    rules=st.lists(st.lists(conditions, min_size=1, max_size=3), max_size=3),
    always=st.lists(st.sampled_from(ACTIONS), max_size=2, unique=True),
    weights=st.lists(
        st.tuples(
            st.sampled_from([0.25, 0.5, 1.0, -0.5]), st.lists(conditions, min_size=1, max_size=2)
        ),
        max_size=3,
    ),
    threshold=st.sampled_from([0.7, 0.0]),
)
def test_pending_exactly_when_a_rule_always_risk_or_confidence_fires(
    decision, amount, total, rules, always, weights, threshold
):
    review: dict[str, Any] = {
        "confidence_threshold": threshold,
        "always": always,
        "when": [{"name": f"r{i}", "conditions": c} for i, c in enumerate(rules)],
    }
    if weights:
        factors = [
            {"name": f"f{i}", "weight": w, "conditions": c} for i, (w, c) in enumerate(weights)
        ]
        review["risk"] = {"threshold": 0.75, "factors": factors}
    h = harness([json.dumps(decision)], world=World(state={"total": total}), review=review)
    record = DecisionFlow(h.parts, h.deps).decide({**INPUT, "amount": amount})
    values = {
        "action": decision["action"],
        "decision.amount": decision["amount"],
        "decision.confidence": decision["confidence"],
        "input.amount": amount,
        "context.total": total,
    }
    fired = [
        f"review_rule:r{i}" for i, c in enumerate(rules) if all(_oracle_holds(x, values) for x in c)
    ]
    if decision["action"] in always:
        fired.append(f"review_always:{decision['action']}")
    score = sum(w for w, c in weights if all(_oracle_holds(x, values) for x in c))
    if weights and score >= 0.75:
        fired.append(f"review_risk:{score:.2f}/0.75")
    if decision["confidence"] < threshold:
        fired.append("low_confidence")
    assert record.status == ("pending_review" if fired else "executed"), record.reasons
    assert record.reasons == fired
    assert bool(h.executions.calls) == (not fired)


@pytest.mark.parametrize(
    "bad", [{"always": ["refund", "refund"]}, {"when": [EXPENSIVE, EXPENSIVE]}]
)
def test_a_name_listed_twice_is_refused(bad):
    with pytest.raises(ValueError, match="listed twice"):
        contract(review=bad)


@pytest.mark.parametrize("weight", [1e308, float("nan"), float("inf")])
def test_a_weight_that_could_overflow_the_score_is_refused(weight):
    factor = {"name": "f", "weight": weight, "conditions": cond("action", "==", "refund")}
    with pytest.raises(ValueError, match="weight"):
        contract(review={"risk": {"threshold": 1, "factors": [factor, factor | {"name": "g"}]}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(decision=st.dictionaries(st.sampled_from(["action", "confidence", "amount"]), json_values),
       context=st.dictionaries(st.sampled_from(["total", "flag"]), json_values),
       rules=st.lists(st.lists(conditions, min_size=1, max_size=3), max_size=3))  # fmt: skip
def test_any_decision_and_world_give_reasons_never_an_exception(decision, context, rules):
    c = contract(review={"when": [{"name": f"r{i}", "conditions": r} for i, r in enumerate(rules)]})
    reasons = review_reasons(decision, c, INPUT, context)
    assert all(isinstance(r, str) for r in reasons)
    # a confidence that is not a number in range is never taken for confidence
    if (
        not isinstance(decision.get("confidence"), int | float)
        or decision["confidence"] != decision["confidence"]
    ):
        assert "low_confidence" in reasons
