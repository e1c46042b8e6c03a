"""Attacks on the guarantees of ``mir eval`` through the real CLI (fixture project
``refunds.triage``, scripted replies): secrets a model echoes never reach the files an
eval writes (reports, a baseline meant to be committed, the history), a regex cannot
hang CI, an empty suite cannot pass the gate, and nothing executes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

SECRET_KEY = "sk-abcdefghijklmnopqrstuvwxyz123456"  # an OpenAI-shaped key
PASSWORD = "hunter2secret"


def reply(action: str, reason: str, confidence: float = 0.9, amount: float = 10) -> str:
    decision = {"action": action, "confidence": confidence, "amount": amount, "reason": reason}
    return json.dumps(json.dumps(decision))


def write_suite(app: Path, text: str) -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir(exist_ok=True)
    suite = evals / "triage.yaml"
    suite.write_text(text)
    return suite


def write_replies(app: Path, lines: list[str]) -> str:
    (app / "replies.jsonl").write_text("".join(line + "\n" for line in lines))
    return "replies.jsonl"


SECRET_SUITE = f"""\
agent: triage
cases:
  - id: echoes-a-key
    input: {{order_id: A1, amount: 10, message: "my key is {SECRET_KEY}"}}
    expect: {{action: refund}}
    assert:
      - {{type: contains, path: reason, value: "nothing like this"}}
  - id: echoes-a-password
    input: {{order_id: A1, amount: 10, message: "password={PASSWORD}"}}
    expect: {{action: deny}}
"""


def test_secrets_a_model_echoes_reach_no_file_an_eval_writes(run_mir, app: Path):
    # A model that repeats a secret from its input: the trace redacts it, and so must
    # the reports (CI artifacts), the baseline (committed to git) and the history.
    write_suite(app, SECRET_SUITE)
    name = write_replies(
        app, [reply("refund", f"key {SECRET_KEY}"), reply("refund", f"password={PASSWORD}")]
    )
    update = run_mir("eval", "--responses", name, "--update-baseline", "-q", cwd=app)
    assert update.returncode == 1, update.stderr  # both cases fail, as meant
    as_json = run_mir("eval", "--responses", name, "-f", "json", "--html", "r.html", cwd=app)
    junit = run_mir("eval", "--responses", name, "-f", "junit", cwd=app)
    table = run_mir("eval", "--responses", name, cwd=app)
    for result in (as_json, junit, table):
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr
    report = json.loads(as_json.stdout)
    [suite] = report["suites"]
    assert [r["passed"] for r in suite["runs"]] == [False, False]  # judged on the real text
    assert "[REDACTED]" in suite["runs"][0]["decision"]["reason"]
    written = {
        "json": as_json.stdout,
        "junit": junit.stdout,
        "table": table.stdout,
        "html": (app / "r.html").read_text(),
        "baseline": (app / "capabilities/refunds/evals/baselines/triage.json").read_text(),
    }
    import duckdb

    with duckdb.connect(str(app / ".mir" / "evals.duckdb"), read_only=True) as db:
        tables = [t for (t,) in db.execute("show tables").fetchall()]
        written["history"] = repr([db.execute(f"select * from {t}").fetchall() for t in tables])
    for where, text in written.items():
        assert SECRET_KEY not in text, where
        assert PASSWORD not in text, where


REGEX_SUITE = (
    "agent: triage\ncases:\n  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
    "    assert:\n      - {type: regex, path: reason, pattern: %s}\n"
)


@pytest.mark.parametrize(
    "pattern", [r"^(a+)+$", r"^(a{1,30}){1,30}$", r"^(a|aa){1,40}$", r"^(\w{1,20}\s?){1,20}$"]
)
def test_a_catastrophic_regex_finishes_on_a_hostile_reply(run_mir, app: Path, pattern: str):
    # Each backtracks for hours in Python's re on a 41-character reply (nested bounded
    # repeats passed the old check and hung the eval): RE2 matches in linear time.
    write_suite(app, REGEX_SUITE % json.dumps(pattern))
    name = write_replies(app, [reply("refund", "a" * 40 + "!")])
    started = time.monotonic()
    try:
        result = run_mir("eval", "--responses", name, "-f", "json", cwd=app, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the regex {pattern} hung mir eval")
    assert time.monotonic() - started < 30
    assert result.returncode in (0, 1), result.stdout + result.stderr
    [run] = json.loads(result.stdout)["suites"][0]["runs"]
    [check] = run["assertions"]
    assert check["passed"] is False and "does not match" in check["message"]


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        (r"(?<=a)b", "invalid perl operator"),
        (r"(a)\1", "invalid escape sequence"),
        (r"a++", "bad repetition operator"),
        (r"(a{1,100}){1,100}", "invalid repetition size"),
    ],
)
def test_a_regex_re2_cannot_run_is_refused_at_its_line(run_mir, app: Path, pattern, what):
    suite = write_suite(app, REGEX_SUITE % json.dumps(pattern))
    name = write_replies(app, [reply("refund", "ab")])
    result = run_mir("eval", "--responses", name, cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    [head, line] = result.stderr.strip().splitlines()
    assert "1 problem in eval suites" in head
    assert line.startswith(f"error: {suite}:6: cases[0] (a).assert[0]:") and what in line
    assert "RE2" in line and "Traceback" not in result.stderr
    assert not (app / ".mir" / "traces").exists()  # nothing ran


@pytest.mark.parametrize(
    "pattern", [r"^a+b*$", r"(ab)+c", r"(\d{1,3}\.){3}\d{1,3}", r"(?i)refund", r"(?P<word>\w+)"]
)
def test_ordinary_regexes_are_still_accepted(run_mir, app: Path, pattern: str):
    write_suite(
        app,
        "agent: triage\ncases:\n  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
        f"    assert:\n      - {{type: regex, path: reason, pattern: {json.dumps(pattern)}}}\n",
    )
    name = write_replies(app, [reply("refund", "refund")])
    result = run_mir("eval", "--responses", name, "-q", cwd=app)
    assert result.returncode in (0, 1), result.stderr


@pytest.mark.parametrize("cases", ["cases: []\n", ""])
def test_a_suite_with_no_cases_cannot_pass_the_gate(run_mir, app: Path, cases: str):
    # an empty suite would print 'gate: passed' and keep CI green while testing nothing
    suite = write_suite(app, "agent: triage\n" + cases)
    result = run_mir("eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2, result.stdout
    assert str(suite) in result.stderr and "no cases" in result.stderr
    assert "Traceback" not in result.stderr


ONE_CASE = (
    "agent: triage\ncases:\n  - id: a\n    input: {order_id: A1, amount: 10, message: x}\n"
    "    expect: {action: refund}\n"
)


@pytest.mark.parametrize("update", [False, True])
def test_a_baseline_path_that_is_a_folder_is_one_line_before_anything_runs(
    run_mir, app: Path, update: bool
):
    # it read as 'no baseline' (the gate silently lost its reference), and
    # --update-baseline ran the whole suite and then died with a traceback
    suite = write_suite(app, ONE_CASE)
    folder = suite.parent / "baselines" / "triage.json"
    folder.mkdir(parents=True)
    args = ["eval", "--provider", "rules", *(["--update-baseline"] if update else [])]
    result = run_mir(*args, cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert str(folder) in line and "not a file" in line
    assert not (app / ".mir" / "traces").exists()  # nothing ran


def test_a_baseline_folder_that_cannot_be_written_is_one_line(run_mir, app: Path):
    suite = write_suite(app, ONE_CASE)
    (suite.parent / "baselines").write_text("a file where the folder should be\n")
    result = run_mir("eval", "--provider", "rules", "--update-baseline", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "cannot write the baseline" in result.stderr


def test_extra_reply_lines_are_named_not_silently_dropped(run_mir, app: Path):
    # a case deleted from the suite shifts every later reply onto the wrong case; the
    # lines left over at the end are the visible sign, so they are reported (not fatal:
    # the replies may be shared by a bigger selection)
    write_suite(app, ONE_CASE)
    name = write_replies(app, [reply("refund", "r"), reply("deny", "r"), reply("deny", "r")])
    result = run_mir("eval", "--responses", name, "-q", cwd=app)
    assert result.returncode == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "3 line(s)" in warning[0] and "uses 1" in warning[0]
    assert "Traceback" not in result.stderr and "UserWarning" not in result.stderr


def test_fallback_runs_in_workers_execute_nothing_and_drift_sees_no_decision(run_mir, app: Path):
    # garbage replies send every run to the fallback rules (which pick an action with
    # an executor), in -j 2 worker processes, twice per case: still nothing executes,
    # no ledger appears, and drift counts none of these flows as production
    write_suite(app, SECRET_SUITE)
    name = write_replies(app, [json.dumps("not json at all")] * 4)
    result = run_mir("eval", "--responses", name, "-j", "2", "--repeat", "2", "-f", "json", cwd=app)
    assert result.returncode in (0, 1), result.stderr
    runs = json.loads(result.stdout)["suites"][0]["runs"]
    assert len(runs) == 4 and {r["status"] for r in runs} == {"fallback"}
    assert not (app / "executed.jsonl").exists()
    assert not (app / ".mir" / "executions.db").exists()
    drift = run_mir(
        "drift",
        "refunds.triage",
        "--last",
        "10",
        "--reference-last",
        "10",
        "--format",
        "json",
        cwd=app,
    )
    assert drift.returncode == 0, drift.stderr
    [agent] = json.loads(drift.stdout)["agents"]
    assert agent["current"]["decisions"] == 0 and agent["reference"]["decisions"] == 0
