"""A process SIGKILLed inside an executor: the replay executes nothing twice. A process
that died before claiming execution: the replay checks the decision like a first run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mir.project import load_project_at
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
MIR = Path(sys.executable).parent / "mir"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
INPUT = json.dumps({"order_id": "A1", "amount": 40})

pytestmark = pytest.mark.slow


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    return root


def mir(root: Path, *args: str, hold: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    if hold is not None:
        env["REFUNDS_HOLD"] = str(hold)
    return subprocess.Popen(
        [str(MIR), *args],
        cwd=root,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def kill_inside_executor(proc: subprocess.Popen[str], hold: Path) -> None:
    started = hold.with_name(hold.name + ".started")
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "executor never started"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def executions(root: Path) -> list[str]:
    log = root / "executed.jsonl"
    return log.read_text().splitlines() if log.exists() else []


def only_flow(root: Path) -> str:
    with TraceStore.for_project(load_project_at(root)) as store:
        (flow,) = store.list_flows()
        return flow.flow_id


def replay(root: Path, flow_id: str) -> dict:
    proc = mir(root, "approve", flow_id, "--json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # aborted: the outcome is in doubt
    return json.loads(out)


def test_a_run_killed_mid_execution_is_never_executed_again(app: Path, tmp_path: Path):
    (app / "r.jsonl").write_text(json.dumps(json.dumps(GOOD)) + "\n")
    hold = tmp_path / "hold"
    proc = mir(
        app,
        "run",
        "agent",
        "refunds.triage",
        "--input",
        INPUT,
        "--provider",
        "scripted",
        "--responses",
        "r.jsonl",
        hold=hold,
    )
    kill_inside_executor(proc, hold)
    flow_id = only_flow(app)
    record = replay(app, flow_id)
    assert record["status"] == "aborted"
    assert record["reasons"][-1] == "execution_in_doubt"
    assert record["executed"] is False
    again = mir(app, "approve", flow_id)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 1 and f"flow {flow_id} is already aborted" in err
    assert executions(app) == []
    with sqlite3.connect(app / ".mir" / "executions.db") as con:
        claims = con.execute("SELECT outcome FROM executions").fetchall()
    assert claims == [(None,)]  # the claim the killed process made, and no outcome


def test_an_approval_killed_mid_execution_is_never_executed_again(app: Path, tmp_path: Path):
    low = {**GOOD, "confidence": 0.2}
    (app / "r.jsonl").write_text(json.dumps(json.dumps(low)) + "\n")
    first = mir(
        app,
        "run",
        "agent",
        "refunds.triage",
        "--input",
        INPUT,
        "--provider",
        "scripted",
        "--responses",
        "r.jsonl",
        "--json",
    )
    out, _ = first.communicate(timeout=120)
    flow_id = json.loads(out)["flow_id"]
    hold = tmp_path / "hold"
    kill_inside_executor(mir(app, "approve", flow_id, hold=hold), hold)
    record = replay(app, flow_id)
    assert record["reasons"][-1] == "execution_in_doubt"
    assert executions(app) == []
    with TraceStore.for_project(load_project_at(app)) as store:
        steps = [(e.step, e.data.get("verdict")) for e in store.flow(flow_id) if e.step == "review"]
    assert steps == [("review", "approve"), ("review", "replay")]


def test_two_reviewers_approving_at_once_execute_it_once(app: Path):
    low = {**GOOD, "confidence": 0.2}
    (app / "r.jsonl").write_text((json.dumps(json.dumps(low)) + "\n") * 2)
    first = mir(
        app,
        "run",
        "agent",
        "refunds.triage",
        "--input",
        INPUT,
        "--provider",
        "scripted",
        "--responses",
        "r.jsonl",
        "--json",
    )
    out, _ = first.communicate(timeout=120)
    flow_id = json.loads(out)["flow_id"]
    reviewers = [mir(app, "approve", flow_id, "--by", name, "--json") for name in ("ana", "bo")]
    results = [p.communicate(timeout=120) for p in reviewers]
    assert len(executions(app)) == 1
    records = [json.loads(out) for out, _ in results if out]
    assert any(r["executed"] and r["reasons"][-1:] != ["already_executed"] for r in records)


def test_a_replay_after_a_crash_before_the_claim_checks_the_ttl(app: Path):
    """The run records its decision for execution, then dies before claiming the key
    (here: the ledger cannot be opened). Nothing executed; much later, `mir approve`
    must treat the decision like a first run: expired, so STALE, not executed."""
    contract = app / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract.write_text(contract.read_text().replace("ttl_seconds: 300", "ttl_seconds: 1"))
    (app / "r.jsonl").write_text(json.dumps(json.dumps(GOOD)) + "\n")
    state = app / ".mir"
    state.mkdir()
    (state / "executions").write_text("")  # the file-per-key ledger of older versions
    (state / "executions.db").mkdir()  # and the SQLite one: neither can be opened
    args = ("--input", INPUT, "--provider", "scripted", "--responses", "r.jsonl")
    run = mir(app, "run", "agent", "refunds.triage", *args)
    _, err = run.communicate(timeout=120)
    assert run.returncode != 0, err
    flow_id = only_flow(app)
    with TraceStore.for_project(load_project_at(app)) as store:
        assert [e.data.get("phase") for e in store.flow(flow_id)][-1] == "claim"
    (state / "executions").unlink()
    (state / "executions.db").rmdir()
    time.sleep(1.5)
    proc = mir(app, "approve", flow_id, "--json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    record = json.loads(out)
    assert record["status"] == "stale" and record["reasons"][-1] == "ttl_expired"
    assert record["executed"] is False and executions(app) == []


def test_a_claim_in_the_older_folder_ledger_still_stops_a_replay(app: Path, tmp_path: Path):
    """A project upgraded from the file-per-key ledger: the claim file of a run killed
    inside its executor is imported on first use, so the replay is still in doubt."""
    (app / "r.jsonl").write_text(json.dumps(json.dumps(GOOD)) + "\n")
    hold = tmp_path / "hold"
    args = ("--input", INPUT, "--provider", "scripted", "--responses", "r.jsonl")
    kill_inside_executor(mir(app, "run", "agent", "refunds.triage", *args, hold=hold), hold)
    flow_id = only_flow(app)
    key = hold.with_name(hold.name + ".started").read_text()
    state = app / ".mir"
    for name in ("executions.db", "executions.db-wal", "executions.db-shm"):
        (state / name).unlink(missing_ok=True)  # as an older mir left it: no database
    (state / "executions").mkdir()
    (state / "executions" / key).write_text(json.dumps({"flow_id": flow_id}) + "\n")
    record = replay(app, flow_id)
    assert record["reasons"][-1] == "execution_in_doubt" and executions(app) == []
    assert not (state / "executions").exists()
    with sqlite3.connect(state / "executions.db") as con:
        assert con.execute("SELECT key, outcome FROM executions").fetchall() == [(key, None)]
