"""``mir eval`` through the real CLI on the runtime fixture project (``refunds.triage``),
with scripted replies: exit codes, replay in case order whatever ``-j``, repeats, Ctrl-C,
and that an eval never executes (no executor call, no ledger file, flows marked eval)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

SUITE = """\
agent: triage
description: fixture suite
cases:
  - id: refund-small
    input: {order_id: A1, amount: 10, message: "broken"}
    expect: {action: refund, status: executed}
  - id: deny-late
    input: {order_id: A1, amount: 40, message: "changed my mind a year later"}
    expect: {action: deny}
    assert:
      - {type: retries, max: 0}
  - id: unsure-goes-to-review
    input: {order_id: A1, amount: 60, message: "?"}
    context: {order_total: 90}
    tags: [critical]
    expect: {status: pending_review}
"""


def reply(action: str, confidence: float = 0.9, amount: float = 10) -> str:
    decision = {"action": action, "confidence": confidence, "amount": amount, "reason": "r"}
    return json.dumps(json.dumps(decision))


GOOD = [reply("refund"), reply("deny", 0.95, 0), reply("refund", 0.3, 60)]


@pytest.fixture
def suite_app(app: Path) -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    return app


def replies(app: Path, lines: list[str], name: str = "replies.jsonl") -> str:
    (app / name).write_text("".join(line + "\n" for line in lines))
    return name


def as_json(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout)


# ------------------------------------------------------------------ errors, before any run
def test_without_suites_it_says_where_it_looked(run_mir, app: Path):
    result = run_mir("eval", cwd=app)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: no eval suites in capabilities/*/evals/")
    assert "mir new agent" in line


def test_an_unknown_agent_is_one_line(run_mir, suite_app: Path):
    result = run_mir("eval", "refunds.nobody", cwd=suite_app)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "unknown agent 'refunds.nobody'" in line and "Traceback" not in result.stderr


def test_a_suite_naming_a_missing_agent_says_file_and_line(run_mir, suite_app: Path):
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text(SUITE.replace("agent: triage", "# a comment\nagent: triager"))
    result = run_mir("eval", cwd=suite_app)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert f"{suite}:2" in line and "'triager'" in line


def test_bad_yaml_is_one_line_with_file_and_line(run_mir, suite_app: Path):
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text("agent: triage\ncases:\n  - id: [unclosed\n")
    result = run_mir("eval", str(suite), cwd=suite_app)
    assert result.returncode == 2
    assert "triage.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_a_missing_suite_path_is_a_usage_error(run_mir, suite_app: Path):
    result = run_mir("eval", "capabilities/refunds/evals/nope.yaml", cwd=suite_app)
    assert result.returncode == 2
    assert "suite file not found" in result.stderr


def test_scripted_without_responses_is_a_usage_error(run_mir, suite_app: Path):
    result = run_mir("eval", "--provider", "scripted", cwd=suite_app)
    assert result.returncode == 2
    assert "--responses" in result.stderr


# ------------------------------------------------------------------ needs the whole of mir eval
def test_too_few_replies_exit_2_before_anything_runs(run_mir, suite_app: Path):
    name = replies(suite_app, GOOD[:2])
    result = run_mir("eval", "--responses", name, cwd=suite_app)
    assert result.returncode == 2
    assert "2 line(s); these suites need 3" in result.stderr
    assert not (suite_app / ".mir" / "traces").exists() or not list(
        (suite_app / ".mir" / "traces").rglob("*.jsonl")
    )


def test_a_passing_suite_exits_0_and_executes_nothing(run_mir, suite_app: Path):
    name = replies(suite_app, GOOD)
    result = run_mir("eval", "--responses", name, "-f", "json", cwd=suite_app)
    assert result.returncode == 0, result.stderr
    [suite] = as_json(result)["suites"]
    assert [(r["case_id"], r["passed"]) for r in suite["runs"]] == [
        ("refund-small", True),
        ("deny-late", True),
        ("unsure-goes-to-review", True),
    ]
    assert [r["status"] for r in suite["runs"]] == ["executed", "executed", "pending_review"]
    assert not (suite_app / "executed.jsonl").exists()  # no executor ran
    assert not (suite_app / ".mir" / "executions.db").exists()  # no ledger was created
    # plain progress lines on stderr (not a terminal), one per finished run
    assert result.stderr.count("pass ") == 3
    # each with the time left at the pace so far, from the first finished run on
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 3 and all(re.search(r", ETA \d+:\d\d$", line) for line in lines), lines


def test_eval_flows_are_kept_apart_in_traces_list(run_mir, suite_app: Path):
    name = replies(suite_app, GOOD)
    assert run_mir("eval", "--responses", name, "-q", cwd=suite_app).returncode == 0
    production = run_mir("traces", "list", "--json", cwd=suite_app)
    assert json.loads(production.stdout) == []
    evals = json.loads(
        run_mir("traces", "list", "--source", "eval", "--json", cwd=suite_app).stdout
    )
    assert len(evals) == 3 and {f["source"] for f in evals} == {"eval"}
    table = run_mir("traces", "list", "--source", "all", cwd=suite_app).stdout
    rows = [line.split() for line in table.splitlines()[1:]]
    assert sorted(r[2] for r in rows) == ["eval"] * 3, table  # the source column
    assert "executed" in {r[3] for r in rows}, table
    wrong = run_mir("traces", "list", "--source", "evals", cwd=suite_app)
    assert wrong.returncode == 2 and "production, eval, shadow, replay, all" in wrong.stderr


def test_a_failing_case_exits_1_and_names_the_failure(run_mir, suite_app: Path):
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text(SUITE.replace("description:", "min_pass_rate: 1.0\ndescription:"))
    name = replies(suite_app, [GOOD[0], reply("refund", 0.95, 40), GOOD[2]])
    result = run_mir("eval", "--responses", name, cwd=suite_app)
    assert result.returncode == 1, result.stderr
    assert "deny-late" in result.stdout and "gate: FAILED" in result.stdout


def test_jobs_2_replays_the_same_line_for_the_same_run(run_mir, suite_app: Path):
    lines = [GOOD[0], reply("refund", 0.95, 40), GOOD[2]] * 2  # 6 runs with --repeat 2
    name = replies(suite_app, lines)
    one = as_json(
        run_mir("eval", "--responses", name, "--repeat", "2", "-f", "json", cwd=suite_app)
    )
    two = as_json(
        run_mir(
            "eval", "--responses", name, "--repeat", "2", "-j", "2", "-f", "json", cwd=suite_app
        )
    )

    def outcome(report: dict) -> list[tuple]:
        return [
            (r["case_id"], r["repeat"], r["passed"], r["status"], r["action"], r["decision"])
            for r in report["suites"][0]["runs"]
        ]

    assert outcome(one) == outcome(two)
    assert len(outcome(two)) == 6
    assert len({r["flow_id"] for r in two["suites"][0]["runs"]}) == 6


def test_repeat_3_finds_the_flaky_case(run_mir, suite_app: Path):
    # refund-small x3, deny-late x3, review x3: deny-late fails on its second run
    lines = [GOOD[0]] * 3 + [GOOD[1], reply("refund", 0.95, 40), GOOD[1]] + [GOOD[2]] * 3
    name = replies(suite_app, lines)
    report = as_json(
        run_mir("eval", "--responses", name, "--repeat", "3", "-f", "json", cwd=suite_app)
    )
    [suite] = report["suites"]
    deny = next(c for c in suite["cases"] if c["case_id"] == "deny-late")
    assert (deny["runs"], deny["passes"], deny["pass_all"], deny["pass_any"]) == (3, 2, False, True)
    assert suite["flaky"] == ["deny-late"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_the_partial_results(suite_app: Path, jobs: str):
    # a slow world (the context loader sleeps) so the run is still going when SIGINT comes
    adapters = suite_app / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(
        adapters.read_text()
        + "\n\n_load = load_order\n\n\ndef load_order(input):\n"
        + "    time.sleep(0.15)\n    return _load(input)\n"
    )
    cases = "".join(
        f"  - id: c{i}\n    input: {{order_id: A1, amount: 10, message: m{i}}}\n"
        "    expect: {action: refund}\n"
        for i in range(40)
    )
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text("agent: triage\ncases:\n" + cases)
    name = replies(suite_app, [GOOD[0]] * 40)
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [str(MIR_EXE), "eval", "--responses", name, "-j", jobs, "-f", "json"],
        cwd=suite_app,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    seen = ""
    assert proc.stderr is not None
    while "[ 2/40]" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    [result] = json.loads(out)["suites"]
    assert result["interrupted"] is True
    assert 2 <= len(result["runs"]) < 40
    # the runs are reported in case order, and every flow that ran has its final event
    ids = [r["case_id"] for r in result["runs"]]
    assert ids == sorted(ids, key=lambda c: int(c[1:]))
    events = run_mir_json(suite_app, "traces", "list", "--source", "eval", "--json")
    assert {f["flow_id"] for f in events} >= {r["flow_id"] for r in result["runs"]}
    assert all(f["status"] is not None for f in events)
    assert not (suite_app / "executed.jsonl").exists()


def run_mir_json(cwd: Path, *args: str):
    out = subprocess.run(
        [str(MIR_EXE), *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


def test_on_a_terminal_progress_is_a_bar_not_lines(suite_app: Path):
    import pty

    from tests.support.terminal import read_terminal

    name = replies(suite_app, GOOD)
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [str(MIR_EXE), "eval", "--responses", name, "-f", "json"],
        cwd=suite_app,
        env=env,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    terminal = read_terminal(master, process).decode(errors="replace")
    out = process.stdout.read().decode() if process.stdout else ""
    assert process.wait(timeout=30) == 0, terminal
    assert "passed" in terminal and "failed" in terminal and "ETA" in terminal, terminal
    assert "/3" in terminal and "[1/3]" not in terminal  # the bar, not the plain lines
    assert "\x1b" not in out and json.loads(out)["exit_code"] == 0


def test_eval_is_a_group_whose_default_is_a_run(run_mir, tmp_path: Path):
    listing = run_mir("eval", "--help", cwd=tmp_path)
    assert listing.returncode == 0
    assert "run" in listing.stdout and "calibrate" in listing.stdout
    # `mir eval [TARGETS] [OPTIONS]` is `mir eval run ...`; a named command is itself
    assert "--jobs" in run_mir("eval", "run", "--help", cwd=tmp_path).stdout
    assert "LABELS" in run_mir("eval", "calibrate", "--help", cwd=tmp_path).stdout


def test_every_suite_problem_is_listed_at_once_before_anything_runs(run_mir, suite_app: Path):
    suite = suite_app / "capabilities" / "refunds" / "evals" / "triage.yaml"
    suite.write_text(
        "agent: triage\ncases:\n  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
        "    expect: {actoin: refund}\n    assert:\n"
        '      - {type: regex, path: reason, pattern: "(["}\n'
    )
    result = run_mir("eval", "--provider", "rules", cwd=suite_app)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[0] == "error: 2 problems in eval suites (nothing ran):"
    assert f"{suite}:5:" in lines[1] and f"{suite}:7:" in lines[2]
    assert "Traceback" not in result.stderr
    assert not (suite_app / ".mir" / "traces").exists()
