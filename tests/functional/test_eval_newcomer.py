"""A newcomer's first steps with ``mir eval`` through the real CLI: what a typo or a
first run prints must say what is wrong and exit as documented."""

from __future__ import annotations

from pathlib import Path


def test_history_of_an_unknown_agent_is_a_usage_error(run_mir, app: Path):
    # a typo used to print 'no eval runs recorded ... (run `mir eval` first)', exit 0:
    # the newcomer runs mir eval again and still sees nothing
    result = run_mir("eval", "history", "triag", cwd=app)
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert "unknown agent 'triag'" in line and "mir agents" in line


def test_history_of_a_known_agent_without_runs_says_so(run_mir, app: Path):
    for name in ("triage", "refunds.triage"):
        result = run_mir("eval", "history", name, cwd=app)
        assert result.returncode == 0, result.stderr
        assert f"no eval runs recorded for {name}" in result.stdout


def test_a_failing_run_that_does_not_gate_says_why(run_mir, app: Path):
    # the scaffolded suite's case fails on a first run and the gate passes (no baseline,
    # no min_pass_rate): 'only the thresholds gate' named thresholds the suite has not
    # got; the note must say that the failures do not fail the gate, and how to make them
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(
        "agent: triage\ncases:\n  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    expect: {action: deny}\n"
    )
    result = run_mir("eval", "--provider", "rules", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "gate: passed" in result.stdout
    note = result.stdout.split("gate: passed", 1)[1]
    assert "1 failed run does not fail the gate" in note
    assert "min_pass_rate" in note and "--update-baseline" in note


def test_format_html_points_at_the_html_option(run_mir, app: Path):
    # the issue and the README speak of an HTML report: `-f html` is the first guess
    result = run_mir("eval", "-f", "html", cwd=app)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "unknown format 'html'" in line and "--html FILE" in line


def test_duplicate_case_ids_name_the_cases_line_without_pydantic_words(run_mir, app: Path):
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    case = "  - id: same\n    input: {order_id: A1, amount: 10, message: x}\n"
    (evals / "triage.yaml").write_text("agent: triage\n\ncases:\n" + case + case)
    result = run_mir("eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "triage.yaml:3: cases: duplicate case id 'same' (cases[0] and cases[1])" in line
    assert "<root>" not in line and "Value error" not in line
