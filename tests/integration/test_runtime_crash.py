"""A process SIGKILLed inside an executor: the replay executes nothing twice."""

from __future__ import annotations

import json
import os
import shutil
import signal
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
    assert again.returncode == 2 and "is aborted, not pending review" in err
    assert executions(app) == []
    claims = list((app / ".mir" / "executions").iterdir())
    assert len(claims) == 1  # the claim the killed process made, and no outcome


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
