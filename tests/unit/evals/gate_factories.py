"""Hand-built suites, runs and results for the gate, baseline and report tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from mir.contracts import EvalSuite
from mir.evals.domain import AssertionResult, CaseRun, SuiteResult
from mir.evals.gate import conclude

STARTED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FINISHED = STARTED + timedelta(seconds=3)


def make_suite(
    ids: Iterable[str],
    *,
    critical: Iterable[str] = (),
    agent: str = "triage",
    repeat: int = 1,
    **settings: object,
) -> EvalSuite:
    critical = set(critical)
    cases = [
        {"id": i, "input": {"text": i}, "tags": ["critical"] if i in critical else []} for i in ids
    ]
    return EvalSuite.model_validate({"agent": agent, "repeat": repeat, "cases": cases, **settings})


def make_run(
    case_id: str,
    passed: bool,
    *,
    repeat: int = 0,
    confidence: float | None = None,
    decision: dict | None = None,
    assertions: tuple[AssertionResult, ...] | None = None,
    tags: tuple[str, ...] = (),
) -> CaseRun:
    if assertions is None:
        assertions = (
            AssertionResult(
                type="equals",
                tier="deterministic",
                path="action",
                passed=passed,
                expected="reply",
                actual="reply" if passed else "escalate",
                message="" if passed else "action: expected 'reply', got 'escalate'",
            ),
        )
    return CaseRun(
        case_id=case_id,
        repeat=repeat,
        tags=tags,
        passed=passed,
        flow_id=f"flow-{case_id}-{repeat}",
        status="executed" if passed else "rejected",
        action="reply" if passed else "escalate",
        decision=decision
        if decision is not None
        else {"action": "reply" if passed else "escalate"},
        confidence=confidence,
        provider="scripted",
        model="script",
        prompt_hash="p1",
        latency_ms=1.5,
        tokens=12,
        assertions=assertions,
    )


def runs_of(outcomes: Mapping[str, bool]) -> list[CaseRun]:
    return [make_run(case_id, passed) for case_id, passed in outcomes.items()]


def result_of(
    suite: EvalSuite, runs: list[CaseRun], *, baseline=None, **options: object
) -> SuiteResult:
    settings = {
        "suite_ref": f"capabilities/desk/evals/{suite.agent}.yaml",
        "baseline": baseline,
        "started_at": STARTED,
        "finished_at": FINISHED,
        "review_threshold": 0.6,
        "confidence_source": "reported",
        "provider": "scripted",
        "model": "script",
        "prompt_hash": "p1",
    }
    settings.update(options)
    return conclude(suite, runs, **settings)  # type: ignore[arg-type]
