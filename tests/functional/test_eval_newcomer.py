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
