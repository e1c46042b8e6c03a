"""Assertion evaluation on hand-built records and events: each rule and its messages."""

from __future__ import annotations

from typing import Any

import pytest

from mir.contracts import EvalCase
from mir.evals.assertions import Observation, evaluate, expand
from mir.runtime import DecisionRecord
from mir.traces import TraceEvent
from tests.unit.runtime.fakes import harness

PARTS = harness().parts
DECISION = {
    "action": "refund",
    "confidence": 0.9,
    "amount": 40,
    "reason": "arrived damaged",
    "tags": ["damaged", "fast"],
    "refund": {"amount": 40.0, "items": [{"sku": "A"}, {"sku": "B"}]},
    "flag": True,
}


def record(status: str = "executed", decision: Any = DECISION, reasons=(), **kw) -> DecisionRecord:
    action = decision.get("action") if isinstance(decision, dict) else None
    return DecisionRecord(
        flow_id="f1",
        agent="refunds.triage",
        status=status,
        decision=decision,
        action=action,
        reasons=list(reasons),
        **kw,
    )


def event(step: str, seq: int, flow_id: str = "f1", **kw) -> TraceEvent:
    return TraceEvent(flow_id=flow_id, seq=seq, step=step, agent="refunds.triage", **kw)


def case(*assertions: dict[str, Any], expect: dict[str, Any] | None = None) -> EvalCase:
    return EvalCase.model_validate(
        {"id": "c1", "input": {}, "expect": expect or {}, "assert": list(assertions)}
    )


def check(assertion: dict[str, Any], rec: DecisionRecord | None = None, events=()):
    (result,) = evaluate(case(assertion), Observation(rec or record(), list(events), PARTS))
    return result


# --------------------------------------------------------------------- expand
def test_expand_puts_the_shorthand_first_then_the_assert_list_in_order():
    c = case(
        {"type": "retries", "max": 1},
        {"type": "rubric", "rubric": "polite"},
        expect={"action": "refund", "status": "executed", "refund.amount": 40},
    )
    kinds = [(a.type, getattr(a, "path", None)) for a in expand(c)]
    assert kinds == [
        ("equals", "action"),
        ("status", None),
        ("equals", "refund.amount"),
        ("retries", None),
        ("rubric", None),
    ]


def test_evaluate_skips_judge_assertions_and_keeps_the_order_of_the_rest():
    c = case(
        {"type": "rubric", "rubric": "polite"},
        {"type": "retries", "max": 0},
        expect={"status": "executed"},
    )
    results = evaluate(c, Observation(record(), [], PARTS))
    assert [r.type for r in results] == ["status", "retries"]
    assert all(r.passed for r in results)


def test_an_expect_status_the_format_does_not_know_fails_instead_of_raising():
    c = case(expect={"status": "done", "": 1})
    results = evaluate(c, Observation(record(), [], PARTS))
    assert [r.passed for r in results] == [False, False]


# --------------------------------------------------------------------- deterministic
@pytest.mark.parametrize(
    ("assertion", "passed"),
    [
        ({"type": "equals", "path": "amount", "value": 40.0}, True),  # 40 == 40.0 in JSON
        ({"type": "equals", "path": "flag", "value": 1}, False),  # true is not 1
        ({"type": "equals", "path": "flag", "value": True}, True),
        ({"type": "equals", "path": "refund.items.1.sku", "value": "B"}, True),
        (
            {
                "type": "equals",
                "path": "refund",
                "value": {"amount": 40, "items": [{"sku": "A"}, {"sku": "B"}]},
            },
            True,
        ),
        ({"type": "contains", "path": "reason", "value": "damage"}, True),
        ({"type": "contains", "path": "reason", "value": "late"}, False),
        ({"type": "contains", "path": "tags", "value": "fast"}, True),
        ({"type": "contains", "path": "refund", "value": "items"}, True),
        ({"type": "contains", "path": "amount", "value": 4}, False),
        ({"type": "regex", "path": "reason", "pattern": "^arrived\\s+dam"}, True),
        ({"type": "regex", "path": "reason", "pattern": "^damaged"}, False),
        ({"type": "regex", "path": "amount", "pattern": "40"}, False),  # not text
        ({"type": "regex", "path": "reason", "pattern": "(unclosed"}, False),
        ({"type": "one_of", "path": "action", "values": ["deny", "refund"]}, True),
        ({"type": "one_of", "path": "action", "values": ["deny"]}, False),
        ({"type": "range", "path": "amount", "min": 0, "max": 40}, True),
        ({"type": "range", "path": "amount", "max": 39.5}, False),
        ({"type": "range", "path": "flag", "min": 0}, False),  # a bool is not a number
        ({"type": "status", "value": "executed"}, True),
        ({"type": "status", "value": ["fallback", "executed"]}, True),
        ({"type": "status", "value": "rejected"}, False),
    ],
)
def test_deterministic_rules(assertion, passed):
    result = check(assertion)
    assert result.passed is passed
    assert result.tier == "deterministic"
    assert (result.message == "") is passed


def test_failures_say_what_was_found_and_what_was_expected():
    result = check({"type": "equals", "path": "action", "value": "deny"})
    assert (result.expected, result.actual) == ("deny", "refund")
    assert result.message == "action is 'refund', expected 'deny'"
    result = check({"type": "range", "path": "amount", "min": 50})
    assert result.message == "amount is 40, below the minimum 50"
    assert check({"type": "regex", "path": "reason", "pattern": "(x"}).message.startswith(
        "invalid regex '(x'"
    )


def test_a_missing_field_fails_with_its_name():
    result = check({"type": "equals", "path": "refund.currency", "value": "EUR"})
    assert result.passed is False and result.actual is None
    assert result.message == "the decision has no field 'refund.currency'"
    assert check({"type": "equals", "path": "tags.7", "value": "x"}).passed is False


def test_a_flow_without_a_decision_fails_every_path_assertion_clearly():
    rejected = record("rejected", None, ["input_invalid"])
    for assertion in (
        {"type": "equals", "path": "action", "value": "refund"},
        {"type": "range", "path": "amount", "max": 9},
        {"type": "regex", "path": "reason", "pattern": "x"},
    ):
        result = check(assertion, rejected)
        assert result.passed is False
        assert result.message == "no decision: the flow ended rejected / input_invalid"
    assert check({"type": "status", "value": "rejected"}, rejected).passed is True


def test_reason_present_and_absent():
    rec = record("fallback", reasons=["not_json", "retries_exhausted"])
    assert check({"type": "reason", "value": "retries_exhausted"}, rec).passed
    absent = check({"type": "reason", "value": "not_json", "present": False}, rec)
    assert absent.passed is False
    assert absent.message == "reason 'not_json' present (reasons: not_json, retries_exhausted)"
    assert check({"type": "reason", "value": "low_confidence"}, rec).passed is False


def test_gate_false_is_reported_as_not_gating():
    result = check({"type": "equals", "path": "action", "value": "deny", "gate": False})
    assert result.passed is False and result.gating is False
    assert check({"type": "retries", "max": 0}).gating is True


# --------------------------------------------------------------------- trajectory (hand-built)
def attempt(seq: int, n: int, reasons=(), route="local", **kw) -> list[TraceEvent]:
    meta = {"route": route, "attempt": n}
    return [
        event(
            "infer",
            seq,
            provider=route,
            prompt_tokens=10,
            completion_tokens=5,
            latency_ms=12.5,
            data=meta,
            **kw,
        ),
        event("validate", seq + 1, reasons=tuple(reasons), data=meta),
    ]


def test_trajectory_reads_only_the_events_of_its_own_flow():
    events = [
        event("snapshot", 0),
        *attempt(1, 0, ["not_json"]),
        *attempt(3, 1),
        event("infer", 5, flow_id="other", data={"attempt": 4}, prompt_tokens=99),
        event("final", 5, status="executed", latency_ms=3.0),
    ]
    assert check({"type": "retries", "max": 1}, events=events).actual == 1
    assert check({"type": "tokens", "max": 30}, events=events).actual == 30
    latency = check({"type": "latency_ms", "max": 20}, events=events)
    assert latency.actual == 25.0 and latency.passed is False  # model time, not the final's
    assert check({"type": "route", "value": "local"}, events=events).passed
    assert check({"type": "route", "value": "remote", "used": False}, events=events).passed
    assert check({"type": "cascaded", "value": False}, events=events).passed


def test_schema_valid_first_and_any():
    events = [*attempt(1, 0, ["not_json"]), *attempt(3, 1, ["limit_exceeded"])]
    first = check({"type": "schema_valid", "attempt": "first"}, events=events)
    assert first.passed is False
    assert first.message == "the first answer did not fit the schema (not_json)"
    # a limit is the action's business, not the schema's
    assert check({"type": "schema_valid"}, events=events).passed is True
    all_bad = [*attempt(1, 0, ["wrong_type"]), *attempt(3, 1, ["missing_field", "extra_field"])]
    result = check({"type": "schema_valid"}, events=all_bad)
    assert result.passed is False
    assert (
        result.message
        == "no answer fit the decision schema (wrong_type; extra_field, missing_field)"
    )


def test_schema_valid_without_any_model_answer_fails():
    rejected = record("rejected", None, ["input_invalid"])
    events = [event("validate", 1, reasons=("input_invalid",), data={"phase": "input"})]
    result = check({"type": "schema_valid"}, rejected, events)
    assert result.passed is False
    assert (
        result.message == "no model answer was validated (the flow ended rejected / input_invalid)"
    )


def test_action_allowed_and_integrity_read_the_events_of_the_routed_decision():
    refused_rule = [
        event(
            "fallback",
            1,
            reasons=("role_not_allowed",),
            provider="rules",
            data={"rule": "default", "decision": DECISION},
        ),
    ]
    aborted = record("aborted", reasons=["retries_exhausted", "role_not_allowed"])
    assert check({"type": "action_allowed"}, aborted, refused_rule).passed is False
    assert check({"type": "integrity_passed"}, aborted, refused_rule).passed is False
    expired = [event("validate", 4, reasons=("ttl_expired",), data={"phase": "pre_execute"})]
    stale = record("stale", reasons=["ttl_expired"])
    assert check({"type": "action_allowed"}, stale, expired).passed is True
    result = check({"type": "integrity_passed"}, stale, expired)
    assert result.passed is False and result.actual == ["ttl_expired"]
    # earlier invalid attempts do not count against the decision that was routed
    retried = attempt(1, 0, ["action_not_allowed"]) + attempt(3, 1)
    assert check({"type": "action_allowed"}, record(), retried).passed is True
    no_decision = record("aborted", None, ["no_fallback_rule"])
    assert check({"type": "integrity_passed"}, no_decision).passed is False


def test_flags_from_events_and_status():
    rule = [event("fallback", 1, provider="rules", data={"rule": "0", "decision": DECISION})]
    no_rule = [event("fallback", 1, reasons=("no_fallback_rule",))]
    assert check({"type": "fallback"}, record("fallback"), []).passed
    assert check({"type": "fallback"}, record("pending_review"), rule).passed
    assert check({"type": "route", "value": "rules"}, record("fallback"), rule).passed
    assert check({"type": "fallback"}, record("aborted", None), no_rule).passed is False
    review = [event("route", 2, status="pending_review", reasons=("low_confidence",))]
    assert check({"type": "review_requested"}, record("pending_review"), review).passed
    assert check({"type": "review_requested"}, record("executed"), review).passed
    assert check({"type": "review_requested", "value": False}, record(), []).passed
    changed = [event("recheck", 3, reasons=("state_changed",), data={"result": "changed"})]
    assert check({"type": "stale"}, record("stale"), changed).passed
    assert (
        check({"type": "stale"}, record(), [event("recheck", 3, data={"result": "same"})]).passed
        is False
    )
    cascade = [event("route", 3, reasons=("invalid",), data={"cascade": "invalid", "to": "remote"})]
    result = check({"type": "cascaded", "value": False}, record(), cascade)
    assert result.passed is False
    assert result.message == (
        "the flow cascaded to another route (expected: the flow did not cascade)"
    )


# --------------------------------------------------------------------- totality
def test_hostile_decision_values_fail_one_assertion_never_the_run():
    class Weird:
        def __eq__(self, other):
            raise RuntimeError("no")

        def __repr__(self):
            raise RuntimeError("no repr")

    rec = record(decision={"action": "refund", "x": float("nan"), "y": 10**400})
    results = evaluate(
        case(
            {"type": "range", "path": "x", "min": 0},
            {"type": "equals", "path": "y", "value": 1.5},
            {"type": "contains", "path": "action", "value": ["a"]},
            {"type": "equals", "path": "action", "value": Weird()},
        ),
        Observation(rec, [], PARTS),
    )
    assert [r.passed for r in results] == [False, False, False, False]
