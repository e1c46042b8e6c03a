"""The gate, baselines, reports and history through the real ``mir eval`` CLI, on the
runtime fixture project with scripted replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = """\
agent: triage
cases:
  - id: refund-small
    input: {order_id: A1, amount: 10, message: "broken"}
    expect: {action: refund}
  - id: deny-late
    input: {order_id: A1, amount: 40, message: "changed my mind a year later"}
    expect: {action: deny}
  - id: deny-again
    input: {order_id: A1, amount: 30, message: "no reason"}
    tags: [critical]
    expect: {action: deny}
"""


def reply(action: str, amount: float = 10) -> str:
    decision = {"action": action, "confidence": 0.9, "amount": amount, "reason": "r"}
    return json.dumps(json.dumps(decision))


@pytest.fixture
def suite_app(app: Path) -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    return app


def _replies(app: Path, actions: list[str]) -> str:
    (app / "replies.jsonl").write_text("".join(reply(a) + "\n" for a in actions))
    return "replies.jsonl"


def test_baseline_gate_reports_and_history(run_mir, suite_app: Path) -> None:
    good = _replies(suite_app, ["refund", "deny", "deny"])
    first = run_mir("eval", "--responses", good, "--update-baseline", cwd=suite_app)
    assert first.returncode == 0, first.stderr
    baseline = suite_app / "capabilities" / "refunds" / "evals" / "baselines"
    written = list(baseline.iterdir())
    assert len(written) == 1, written
    data = json.loads(written[0].read_text())
    assert sorted(data["cases"]) == ["deny-again", "deny-late", "refund-small"]

    bad = _replies(suite_app, ["refund", "deny", "refund"])
    html = suite_app / "report.html"
    second = run_mir(
        "eval", "--responses", bad, "--format", "json", "--html", str(html), cwd=suite_app
    )
    assert second.returncode == 1, second.stderr
    report = json.loads(second.stdout)
    (suite,) = report["suites"]
    assert suite["comparison"]["broken"] == ["deny-again"]
    assert suite["gate"]["reasons"] == ["critical case broken: deny-again"]
    assert html.is_file() and "deny-again" in html.read_text()

    junit = run_mir("eval", "--responses", bad, "--format", "junit", cwd=suite_app)
    assert junit.returncode == 1 and "<testsuites" in junit.stdout

    history = run_mir("eval", "history", "triage", "--json", cwd=suite_app)
    assert history.returncode == 0, history.stderr
    rows = json.loads(history.stdout)
    assert [row["gate_passed"] for row in rows] == [True, False, False]
    table = run_mir("eval", "history", "refunds.triage", cwd=suite_app)
    assert table.returncode == 0 and "FAILED" in table.stdout


def test_history_without_runs(run_mir, app: Path) -> None:
    result = run_mir("eval", "history", "triage", cwd=app)
    assert result.returncode == 0
    assert "no eval runs recorded for triage" in result.stdout
