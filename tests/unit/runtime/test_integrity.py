"""The integrity check refuses hostile or broken output with the right reason code."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from mir.runtime.decision_schema import pydantic_schema_check, schema_fields
from mir.runtime.integrity import Circumstances, IntegrityCheck
from mir.runtime.schema_adapters import json_schema_check
from tests.unit.runtime.fakes import Refund, contract, decision

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def check(**contract_changes) -> IntegrityCheck:
    schema = Refund.model_json_schema()
    return IntegrityCheck(
        contract=contract(**contract_changes),
        schema_check=pydantic_schema_check(Refund),
        schema_fields=schema_fields(schema),
    )


def when(**changes) -> Circumstances:
    return Circumstances(**{"role": "agent", "created_at": NOW, "now": NOW, **changes})


def test_a_valid_decision_passes_unchanged():
    verdict = check().check_output(decision(), "stop", when())
    assert verdict.ok
    assert verdict.decision == json.loads(decision())
    assert verdict.reasons == []


HOSTILE = [
    pytest.param("Sure! I would refund it.", "not_json", id="prose"),
    pytest.param('{"action": "refund", "confidence": 0.9, "amo', "truncated", id="cut-json"),
    pytest.param("", "truncated", id="empty"),
    pytest.param('{"action": "refund"} trailing', "not_json", id="trailing-garbage"),
    pytest.param("[1, 2]", "wrong_type", id="array"),
    pytest.param(decision(extra="x"), "extra_field", id="extra-field"),
    pytest.param(
        json.dumps({"action": "refund", "confidence": 0.9, "amount": 4}),
        "missing_field",
        id="missing",
    ),
    pytest.param(decision(amount="forty"), "wrong_type", id="string-for-number"),
    pytest.param(decision(amount="40"), "wrong_type", id="numeric-string-not-coerced"),
    pytest.param(decision(reason=["a"]), "wrong_type", id="list-for-string"),
    pytest.param(decision(action="wire_money"), "action_not_allowed", id="unknown-action"),
    pytest.param(decision(action=None), "action_not_allowed", id="null-action"),
    pytest.param(decision(amount=10000), "limit_exceeded", id="over-limit"),
    pytest.param(decision(confidence=-0.1), "confidence_invalid", id="negative-confidence"),
    pytest.param(decision(confidence=1.5), "confidence_invalid", id="confidence-over-1"),
    pytest.param(decision(confidence="high"), "confidence_invalid", id="confidence-string"),
    pytest.param(decision(confidence=True), "confidence_invalid", id="confidence-bool"),
    pytest.param(decision().replace("0.9", "NaN"), "confidence_invalid", id="nan-confidence"),
    pytest.param(decision().replace("0.9", "Infinity"), "confidence_invalid", id="inf-confidence"),
    pytest.param(decision().replace("40", "NaN"), "not_json", id="nan-amount"),
    pytest.param(decision(reason="x" * 300), "schema_invalid", id="reason-too-long"),
    pytest.param("x" * (1024 * 1024), "output_too_large", id="1MB"),
    pytest.param(decision()[:-1] + "\udcff}", "invalid_utf8", id="invalid-utf8"),
    pytest.param(
        decision(reason="REASON").replace("REASON", "\\udcff"),
        "invalid_utf8",
        id="escaped-surrogate",
    ),
]


@pytest.mark.parametrize(("raw", "code"), HOSTILE)
def test_hostile_output_is_refused_with_its_reason_code(raw: str, code: str):
    verdict = check().check_output(raw, "stop", when())
    assert not verdict.ok
    assert verdict.decision is None
    assert code in verdict.reasons


def test_finish_reason_length_is_truncated_even_if_the_prefix_parses():
    verdict = check().check_output(decision(), "length", when())
    assert verdict.reasons == ["truncated"]


def test_the_agent_may_not_trigger_an_action_the_callers_role_lacks():
    verdict = check().check_output(decision(), "stop", when(role="guest"))
    assert verdict.reasons == ["role_not_allowed"]
    assert not verdict.retryable


def test_a_decision_older_than_its_ttl_expires():
    later = NOW + timedelta(seconds=301)
    assert check().check_output(decision(), "stop", when(now=later)).reasons == ["ttl_expired"]
    assert check().check_output(decision(), "stop", when(now=NOW + timedelta(seconds=299))).ok


def test_token_and_cost_budgets():
    c = check(budget={"max_tokens": 100, "max_cost_usd": 0.01})
    assert c.check_output(decision(), "stop", when(tokens_spent=101)).reasons == ["budget_exceeded"]
    assert c.check_output(decision(), "stop", when(cost_spent=0.02)).reasons == ["budget_exceeded"]
    assert c.check_output(decision(), "stop", when(tokens_spent=100, cost_spent=0.01)).ok


def test_a_suspended_agents_output_is_refused_before_parsing():
    verdict = check().check_output("not even json", "stop", when(suspended=True))
    assert verdict.reasons == ["agent_suspended"]


def test_output_problems_are_retryable_but_circumstances_are_not():
    assert check().check_output("nope", "stop", when()).retryable
    assert check().check_output(decision(amount=9999), "stop", when()).retryable
    assert not check().check_output(decision(), "stop", when(suspended=True)).retryable


def test_messages_say_what_to_fix():
    verdict = check().check_output(decision(amount=10000), "stop", when())
    assert any("amount" in p.message and "500" in p.message for p in verdict.problems)


@pytest.mark.parametrize(
    ("limit", "value", "ok"),
    [
        ({"one_of": ["EUR", "USD"]}, "EUR", True),
        ({"one_of": ["EUR", "USD"]}, "GBP", False),
        ({"max_length": 3}, "abcd", False),
        ({"max_length": 3}, "abc", True),
        ({"minimum": 1}, 0.5, False),
    ],
)
def test_parameter_limits(limit, value, ok):
    actions = {
        "refund": {"executor": "adapters:refund", "limits": {"reason": limit, "amount": {}}},
        "deny": {"executor": "adapters:deny"},
        "escalate": {"executor": "adapters:escalate"},
    }
    if "minimum" in limit:
        actions["refund"]["limits"] = {"amount": limit}
        raw = decision(amount=value)
    else:
        raw = decision(reason=value)
    verdict = check(actions=actions).check_output(raw, "stop", when())
    assert verdict.ok is ok
    if not ok:
        assert verdict.reasons == ["limit_exceeded"]


def test_inline_json_schema_gets_the_same_reason_codes():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["action", "confidence", "amount", "reason"],
        "properties": {
            "action": {"type": "string"},
            "confidence": {"type": "number"},
            "amount": {"type": "number"},
            "reason": {"type": "string"},
        },
    }
    c = IntegrityCheck(
        contract=contract(decision={"json_schema": schema}),
        schema_check=json_schema_check(schema, "x.yaml"),
        schema_fields=schema_fields(schema),
    )
    assert c.check_output(decision(), "stop", when()).ok
    assert "missing_field" in c.check_output('{"action": "refund"}', "stop", when()).reasons
    assert "wrong_type" in c.check_output(decision(amount="x"), "stop", when()).reasons
    assert "extra_field" in c.check_output(decision(x=1), "stop", when()).reasons
