"""``repeat`` is bounded (at most 100 runs of a case, in the suite, a case or
``--repeat``) and checked before anything runs; repeats are independent runs, never
answered from the response cache; pass^k, pass@k and flaky cases reach the table and
the HTML report. Through the installed ``mir`` on the fixture project."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ONE_CASE = (
    "agent: triage\n{head}cases:\n  - id: a\n    input: {{order_id: A1, amount: 10, message: x}}\n"
    "{case}    expect: {{action: refund}}\n"
)


def write_suite(app: Path, *, head: str = "", case: str = "") -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir(exist_ok=True)
    suite = evals / "triage.yaml"
    suite.write_text(ONE_CASE.format(head=head, case=case))
    return suite


def run_quickly(run_mir, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return run_mir(*args, cwd=cwd, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("mir eval kept building runs instead of refusing the repeat count")


@pytest.mark.parametrize(
    ("head", "case", "line"),
    [
        ("repeat: 1000000000\n", "", 2),
        ("", "    repeat: 1000000000\n", 5),
        ("repeat: 101\n", "", 2),
    ],
)
def test_a_huge_repeat_in_the_suite_is_refused_at_its_line(run_mir, app: Path, head, case, line):
    suite = write_suite(app, head=head, case=case)
    result = run_quickly(run_mir, "eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{suite}:{line}" in result.stderr and "repeat" in result.stderr
    assert "100" in result.stderr and "Traceback" not in result.stderr
    assert not (app / ".mir" / "traces").exists()  # nothing ran


@pytest.mark.parametrize("count", ["1000000000", "101", "0"])
def test_a_huge_repeat_option_is_one_line(run_mir, app: Path, count: str):
    write_suite(app)
    result = run_quickly(run_mir, "eval", "--provider", "rules", "--repeat", count, cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert f"--repeat {count}" in line and "Traceback" not in result.stderr


def test_a_hundred_repeats_still_run(run_mir, app: Path):
    write_suite(app, head="repeat: 100\n")
    result = run_mir("eval", "--provider", "rules", "-f", "json", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    [summary] = json.loads(result.stdout)["suites"][0]["cases"]
    assert summary["runs"] == 100 and summary["pass_all"] is True
