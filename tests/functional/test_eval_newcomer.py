"""A newcomer's first steps with ``mir eval`` through the real CLI: what a typo or a
first run prints must say what is wrong and exit as documented."""

from __future__ import annotations

import json
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


FAILING_CASE = (
    "agent: triage\n{head}cases:\n  - id: a\n    input: {{order_id: A1, amount: 10, message: x}}\n"
    "    expect: {{action: deny}}\n"
)


def test_a_failing_first_run_fails_the_gate_and_says_how_to_accept_it(run_mir, app: Path):
    # a fresh scaffold's only case failed on the embedded model, and `mir eval` printed
    # 'gate: passed', exited 0 and drew a green badge over 0 %
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(FAILING_CASE.format(head=""))
    result = run_mir("eval", "--provider", "rules", "--html", "report.html", cwd=app)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "gate: FAILED" in result.stdout
    reason = result.stdout.split("gate: FAILED", 1)[1]
    assert "1 of 1 run failed" in reason and "no baseline" in reason
    assert "min_pass_rate" in reason and "--update-baseline" in reason
    page = (app / "report.html").read_text()
    assert 'class="verdict fail" id="overall"' in page

    # recording the failure as known: the baseline is written, and this run still says 1
    update = run_mir("eval", "--provider", "rules", "--update-baseline", cwd=app)
    assert update.returncode == 1, update.stdout + update.stderr
    assert (evals / "baselines" / "triage.json").is_file()
    assert "1 failing case recorded as a known failure" in update.stderr
    again = run_mir("eval", "--provider", "rules", cwd=app)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "still failing" in again.stdout


def test_a_tolerated_failure_passes_but_the_badge_is_not_green(run_mir, app: Path):
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(FAILING_CASE.format(head="min_pass_rate: 0\n"))
    result = run_mir("eval", "--provider", "rules", "--html", "report.html", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gate: passed" in result.stdout
    page = (app / "report.html").read_text()
    assert 'class="verdict warn" id="overall"' in page and "0.0%" in page


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


def test_failure_messages_read_as_sentences(run_mir, app: Path):
    # they read "review request not happened, expected to" and "outside [, 0.69]"
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(
        "agent: triage\nmin_pass_rate: 0\ncases:\n  - id: a\n"
        "    input: {order_id: A1, amount: 10, message: x}\n    assert:\n"
        "      - {type: review_requested}\n      - {type: range, path: confidence, max: 0.69}\n"
    )
    result = run_mir("eval", "--provider", "rules", "-f", "json", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = json.loads(result.stdout)["suites"][0]["runs"]
    messages = [a["message"] for a in run["assertions"]]
    assert messages[0] == "no review was requested (expected: review was requested)"
    assert messages[1].startswith("confidence is ") and messages[1].endswith(
        ", above the maximum 0.69"
    )


def test_format_errors_and_assertion_problems_of_every_suite_are_listed_at_once(run_mir, app: Path):
    # a suite the format refuses stopped the check: the other suites' problems were
    # only shown once it was fixed
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    broken = evals / "a-broken.yaml"
    broken.write_text(
        "agent: triage\nrepeat: 0\ncases:\n  - id: a\n"
        "    input: {order_id: A1, amount: 10, message: x}\n    expct: {action: refund}\n"
    )
    other = evals / "b-other.yaml"
    other.write_text(
        "agent: triage\ncases:\n  - id: c\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    assert:\n      - {type: equals, path: nope, value: 1}\n"
    )
    unknown = evals / "c-unknown.yaml"
    unknown.write_text("agent: nobody\ncases:\n  - id: d\n    input: {}\n")
    result = run_mir("eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    text = result.stderr
    assert "4 problems in eval suites (nothing ran)" in text
    assert f"{broken}:6: cases.0.expct: unknown key" in text and f"{broken}:2: repeat" in text
    assert f"{other}:6: cases[0] (c).assert[0]: 'nope' is not in the decision schema" in text
    assert f"{unknown}:1" in text and "Traceback" not in text
    assert not (app / ".mir" / "traces").exists()


def test_one_malformed_case_does_not_hide_the_other_cases_problems(run_mir, app: Path):
    # a case the format refused stopped the check of its whole file: the other cases'
    # assertion problems were only shown once it was fixed
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    suite = evals / "triage.yaml"
    suite.write_text(
        "agent: triage\ncases:\n"
        "  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    expect: {action: refnd}\n"
        "  - id: b\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    assert:\n      - {type: equalz, path: action, value: refund}\n"
        "  - id: c\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    assert:\n      - {type: equals, path: nope, value: 1}\n"
    )
    result = run_mir("eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    text = result.stderr
    assert "3 problems in eval suites (nothing ran)" in text, text
    assert f"{suite}:9: cases.1.assert.0" in text and "equalz" in text
    assert f"{suite}:5: cases[0] (a).expect.action: unknown action 'refnd'" in text
    assert f"{suite}:13: cases[2] (c).assert[0]: 'nope' is not in the decision schema" in text
    assert "Traceback" not in text and not (app / ".mir" / "traces").exists()
