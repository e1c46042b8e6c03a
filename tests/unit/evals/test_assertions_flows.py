"""Schema and trajectory assertions against REAL flows: the fixture agent on the scripted
provider, its events read back from the project's real trace store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mir.contracts import EvalCase
from mir.evals.assertions import Observation, evaluate
from mir.runtime import load_agent

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "broken"}
INPUT = {"order_id": "A1", "amount": 40, "message": "arrived broken"}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    return root


def run_flow(
    app: Path,
    *outputs: Any,
    input: dict[str, Any] = INPUT,
    context: dict[str, Any] | None = None,
    role: str = "agent",
    mode: str = "eval",
) -> Observation:
    """One real flow; ``outputs`` are the model's raw answers in order (a decision dict
    is written as its JSON text; an ``answer(...)`` also carries token counts)."""
    script = app / "responses.jsonl"
    lines = [o if isinstance(o, dict) and "text" in o else _text(o) for o in outputs]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, mode=mode
    ) as agent:
        record = agent.decide(input, context, role=role)
        events = agent.trace(record.flow_id)
        return Observation(record=record, events=events, parts=agent.parts, role=role)


def _text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output)


def answer(output: Any, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """A scripted answer that reports token usage like a real provider."""
    return {
        "text": _text(output),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }


def passed(obs: Observation, *assertions: dict[str, Any]) -> list[bool | None]:
    case = EvalCase.model_validate({"id": "c", "input": {}, "assert": list(assertions)})
    return [r.passed for r in evaluate(case, obs)]


@pytest.mark.parametrize("mode", ["eval", "production"])
def test_a_valid_first_answer(app, mode):
    obs = run_flow(app, GOOD, mode=mode)
    assert obs.record.status == "executed"
    assert (app / "executed.jsonl").exists() is (mode == "production")
    assert (
        passed(
            obs,
            {"type": "schema_valid", "attempt": "first"},
            {"type": "action_allowed"},
            {"type": "integrity_passed"},
            {"type": "retries", "max": 0},
            {"type": "fallback", "value": False},
            {"type": "cascaded", "value": False},
            {"type": "review_requested", "value": False},
            {"type": "stale", "value": False},
            {"type": "route", "value": "local"},
            {"type": "route", "value": "scripted"},  # the provider that answered
            {"type": "route", "value": "remote", "used": False},
            {"type": "equals", "path": "amount", "value": 40},
        )
        == [True] * 12
    )


def test_invalid_then_valid_is_one_retry(app):
    obs = run_flow(app, answer("sure! here is my answer", 30, 12), answer(GOOD, 20, 8))
    assert obs.record.status == "executed" and obs.record.tokens == 70
    assert passed(
        obs,
        {"type": "schema_valid", "attempt": "first"},
        {"type": "schema_valid", "attempt": "any"},
        {"type": "retries", "max": 0},
        {"type": "retries", "max": 1},
        {"type": "reason", "value": "not_json"},
        {"type": "cascaded", "value": False},
        {"type": "tokens", "max": 70},
        {"type": "tokens", "max": 69},
        {"type": "latency_ms", "max": 60_000},
    ) == [False, True, False, True, True, True, True, False, True]


def test_hostile_answers_end_in_the_fallback(app):
    hostile = [
        '{"action": "refund", "action": "deny", "confidence": 1, "amount": 1, "reason": "x"}',
        "[" * 5000,
        json.dumps({**GOOD, "amount": 10**6}),  # over the action's limit: not a schema failure
        json.dumps({**GOOD, "extra": "field"}),
        "x" * 70_000,
        json.dumps({**GOOD, "confidence": "high"}),
    ]
    obs = run_flow(app, *hostile, input={**INPUT, "amount": 15})
    assert obs.record.status == "fallback", obs.record
    assert passed(
        obs,
        {"type": "status", "value": "fallback"},
        {"type": "fallback"},
        {"type": "cascaded"},
        {"type": "route", "value": "remote"},
        {"type": "route", "value": "rules"},
        {"type": "retries", "max": 4},
        {"type": "retries", "max": 3},
        {"type": "schema_valid"},  # the limit answer parsed and fit the schema
        {"type": "schema_valid", "attempt": "first"},
        {"type": "action_allowed"},  # the rule's decision is the one routed
        {"type": "integrity_passed"},
        {"type": "reason", "value": "retries_exhausted"},
        {"type": "equals", "path": "amount", "value": 15},
    ) == [True, True, True, True, True, True, False, True, False, True, True, True, True]


def test_a_role_that_may_not_refund_fails_action_allowed_and_integrity(app):
    # the model proposes a refund twice (local, then remote after the cascade); the
    # fallback rule for small amounts also refunds: refused for this role -> aborted
    obs = run_flow(app, GOOD, GOOD, input={**INPUT, "amount": 10}, role="viewer")
    assert obs.record.status == "aborted" and obs.record.decision is not None
    allowed, integrity = evaluate(
        EvalCase.model_validate(
            {
                "id": "c",
                "input": {},
                "assert": [{"type": "action_allowed"}, {"type": "integrity_passed"}],
            }
        ),
        obs,
    )
    assert allowed.passed is False and "role_not_allowed" in allowed.message
    assert integrity.passed is False and integrity.actual == ["role_not_allowed"]


def test_low_confidence_requests_review(app):
    low = {**GOOD, "confidence": 0.2}
    obs = run_flow(app, low, low)  # low confidence cascades local -> remote, then review
    assert obs.record.status == "pending_review"
    assert passed(
        obs,
        {"type": "review_requested"},
        {"type": "cascaded"},
        {"type": "schema_valid", "attempt": "first"},
        {"type": "integrity_passed"},
        {"type": "status", "value": ["executed", "pending_review"]},
    ) == [True, True, True, True, True]


def test_a_world_that_changed_makes_the_flow_stale(app):
    # the caller claims a world the context loader does not confirm at the re-check
    obs = run_flow(app, GOOD, context={"order_total": 1}, mode="production")
    assert obs.record.status == "stale"
    assert passed(obs, {"type": "stale"}, {"type": "reason", "value": "state_changed"}) == [
        True,
        True,
    ]
    assert not (app / "executed.jsonl").exists()
    # in an eval the case's world is the world: the loader is not asked again
    obs = run_flow(app, GOOD, context={"order_total": 1})
    assert passed(
        obs, {"type": "stale", "value": False}, {"type": "status", "value": "executed"}
    ) == [
        True,
        True,
    ]


def test_a_refused_input_has_no_decision_to_assert_on(app):
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(200):
        node["x"] = {}
        node = node["x"]
    obs = run_flow(app, GOOD, input={**INPUT, "deep": deep})
    assert obs.record.status == "rejected"
    case = EvalCase.model_validate(
        {
            "id": "c",
            "input": {},
            "expect": {"status": "rejected", "action": "refund"},
            "assert": [{"type": "schema_valid"}, {"type": "retries", "max": 0}],
        }
    )
    status, action, schema, retries = evaluate(case, obs)
    assert status.passed is True
    assert action.passed is False
    assert action.message == "no decision: the flow ended rejected / input_invalid"
    assert schema.passed is False and retries.passed is True
