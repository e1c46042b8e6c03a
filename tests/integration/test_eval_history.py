"""The eval history in a real DuckDB file: round trip, bulk speed, two writers, a held
lock and a damaged file, and `history` as a command."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mir.evals.baselines import baseline_of
from mir.evals.domain import EvalReport
from mir.evals.history import EvalHistory, EvalHistoryError
from tests.unit.evals.gate_factories import make_suite, result_of, runs_of

REPO = Path(__file__).resolve().parents[2]


def _report(outcomes: dict[str, bool], *, agent: str = "desk.triage", baseline=None):
    suite = make_suite(list(outcomes), agent=agent)
    result = result_of(suite, runs_of(outcomes), baseline=baseline)
    return EvalReport(suites=(result,), exit_code=0 if result.gate.passed else 1)


def test_record_and_read_back(tmp_path: Path) -> None:
    history = EvalHistory(tmp_path / ".mir" / "evals.duckdb")
    assert history.rows("triage") == []  # no file yet: nothing, no error
    first = _report({"a": True, "b": True, "c": False})
    suite = make_suite(["a", "b", "c"], agent="desk.triage")
    baseline = baseline_of(first.suites[0])
    second = _report({"a": False, "b": True, "c": True}, baseline=baseline)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    (run_1,) = history.record(first, at=start)
    (run_2,) = history.record(second, at=start + timedelta(hours=1))
    history.record(_report({"z": True}, agent="refunds"), at=start)
    rows = history.rows("triage")  # the short name finds desk.triage
    assert [r.run_id for r in rows] == [run_1, run_2]  # oldest first
    assert rows[0].pass_rate == pytest.approx(2 / 3) and rows[0].broken is None
    assert (rows[1].broken, rows[1].fixed, rows[1].p_value) == (1, 1, 1.0)
    assert rows[1].gate_passed and rows[1].model == "script" and rows[1].prompt_hash == "p1"
    assert rows[1].recorded_at == start + timedelta(hours=1)
    assert [r.run_id for r in history.rows("desk.triage", limit=1)] == [run_2]
    assert len(history.rows("refunds")) == 1 and history.rows("nobody") == []
    cases = history.case_rows(run_2)
    assert [(c["case_id"], c["passed"], c["change"]) for c in cases] == [
        ("a", False, "broken"),
        ("b", True, None),
        ("c", True, "fixed"),
    ]
    assert cases[0]["failed"] == "action: expected 'reply', got 'escalate'"
    assert suite.agent == rows[0].agent


def test_a_thousand_cases_record_in_bulk(tmp_path: Path) -> None:
    ids = [f"case-{i:04d}" for i in range(1000)]
    report = _report({i: i[-1] != "7" for i in ids})
    history = EvalHistory(tmp_path / "evals.duckdb")
    history.record(report)  # creates the tables
    began = time.perf_counter()
    (run_id,) = history.record(report)
    elapsed = time.perf_counter() - began
    assert len(history.case_rows(run_id)) == 1000
    assert elapsed < 2.0, f"recording 1,000 case runs took {elapsed:.2f}s"


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from mir.evals.history import EvalHistory
    from tests.integration.test_eval_history import _report
    history = EvalHistory(__import__("pathlib").Path({path!r}), lock_timeout=30)
    for n in range(8):
        history.record(_report({{f"{{sys.argv[1]}}-{{n}}": True}}))
    """
)


def test_two_processes_recording_at_once_take_turns(tmp_path: Path) -> None:
    path = tmp_path / "evals.duckdb"
    script = WRITER.format(repo=str(REPO), path=str(path))
    writers = [
        subprocess.Popen([sys.executable, "-c", script, name], cwd=REPO, stderr=subprocess.PIPE)
        for name in ("left", "right")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    assert len(EvalHistory(path).rows("triage", limit=100)) == 16


HOLDER = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS held (x INTEGER)")
    print("holding", flush=True)
    time.sleep(60)
    """
)


def test_a_held_lock_is_one_clear_error_and_try_record_keeps_going(tmp_path: Path) -> None:
    path = tmp_path / "evals.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        history = EvalHistory(path, lock_timeout=0.3)
        report = _report({"a": True})
        with pytest.raises(EvalHistoryError) as caught:
            history.record(report)
        text = str(caught.value)
        assert "held open by another process" in text and str(path) in text
        assert "\n" not in text
        warning = history.try_record(report)
        assert warning is not None and warning.startswith("eval history not recorded:")
    finally:
        holder.kill()
        holder.wait()
    assert EvalHistory(path).try_record(_report({"a": True})) is None  # free again


def test_a_damaged_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "evals.duckdb"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(EvalHistoryError, match="not a readable eval history") as caught:
        EvalHistory(path).record(_report({"a": True}))
    assert "move the file aside" in str(caught.value)


def test_history_command(tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from mir.cli import eval_history

    (tmp_path / "pyproject.toml").write_text("[tool.mir]\n", encoding="utf-8")
    group = typer.Typer()
    eval_history.register(group)

    @group.callback()
    def _group() -> None:  # a group, as `mir eval` is: `history` is its sub-command
        pass

    runner = CliRunner()
    unknown = runner.invoke(group, ["history", "triage", "--project", str(tmp_path)])
    assert unknown.exit_code != 0  # no such agent and no runs of it: a typo, not "no runs"
    agents = tmp_path / "capabilities" / "desk" / "agents"
    agents.mkdir(parents=True)
    (agents / "triage.yaml").write_text("agent: triage\n", encoding="utf-8")
    empty = runner.invoke(group, ["history", "triage", "--project", str(tmp_path)])
    assert empty.exit_code == 0, empty.output
    assert "no eval runs recorded for triage" in empty.output
    history = EvalHistory(tmp_path / ".mir" / "evals.duckdb")
    history.record(_report({"a": True, "b": False}))
    history.record(_report({"a": True, "b": True}))
    table = runner.invoke(group, ["history", "triage", "--project", str(tmp_path)])
    assert table.exit_code == 0, table.output
    assert "pass rate ▅█" in table.output and "50.0%" in table.output
    assert "100.0%" in table.output and "capabilities/desk/evals/desk.triage.yaml" in table.output
    listed = runner.invoke(group, ["history", "triage", "--json", "--project", str(tmp_path)])
    data = json.loads(listed.output)
    assert [row["passed"] for row in data] == [1, 2]


def test_a_folder_where_the_history_belongs_is_an_error_not_no_runs(tmp_path: Path) -> None:
    path = tmp_path / ".mir" / "evals.duckdb"
    path.mkdir(parents=True)
    with pytest.raises(EvalHistoryError, match="a folder, not a file"):
        EvalHistory(path).rows("triage")
