"""SIGKILL inside review: a process killed in the middle of an M-of-N approval (the
first approval traced, the second one executing), and ``mir review expire`` killed while
it closes a batch of flows. Afterwards each flow has exactly one outcome, nothing ran an
executor twice, and ``mir traces verify`` finds the store and every signature sound."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mir.project import load_project_at
from mir.traces import TraceStore
from tests.integration.test_runtime_crash import FIXTURE, executions, kill_inside_executor, mir
from tests.support.processes import run_python

MIR = Path(sys.executable).parent / "mir"
CONTRACT = Path("capabilities") / "refunds" / "agents" / "triage.yaml"
LOW = {"action": "refund", "confidence": 0.2, "amount": 40, "reason": "arrived broken"}

pytestmark = pytest.mark.slow


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MIR), *args], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )


def edit_contract(root: Path, old: str, new: str) -> None:
    path = root / CONTRACT
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def declare(root: Path, keys: Path, *names: str) -> dict[str, Path]:
    made = {}
    for name in names:
        key = keys / f"{name}.key"
        public = run(root, "reviewers", "keygen", name, "--out", str(key))
        assert public.returncode == 0, public.stderr
        added = run(root, "reviewers", "add", name, "--role", "lead", "--public-key",
                    public.stdout.strip())  # fmt: skip
        assert added.returncode == 0, added.stderr
        made[name] = key
    return made


def pending(root: Path, count: int = 1) -> list[str]:
    (root / "low.jsonl").write_text((json.dumps(json.dumps(LOW)) + "\n") * count)
    flows = []
    for i in range(count):
        ticket = json.dumps({"order_id": "A1", "amount": 40, "message": f"broken {i}"})
        done = run(root, "run", "agent", "refunds.triage", "--input", ticket, "--provider",
                   "scripted", "--responses", "low.jsonl", "--as", "req", "--json")  # fmt: skip
        record = json.loads(done.stdout)
        assert record["status"] == "pending_review", done.stderr
        flows.append(record["flow_id"])
        (root / "low.jsonl").write_text((json.dumps(json.dumps(LOW)) + "\n") * count)
    return flows


def finals(root: Path, flow_id: str) -> list[str]:
    with TraceStore.for_project(load_project_at(root)) as store:
        events = store.flow(flow_id)
    seqs = [e.seq for e in events]
    assert len(seqs) == len(set(seqs)), "two events of one flow share a seq"
    return [str(e.status) for e in events if e.step == "final"]


def verified(root: Path) -> None:
    done = run(root, "traces", "verify", "--full")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "signed: ok" in done.stdout


def test_a_second_approval_killed_while_it_executes_ends_in_one_outcome(app, tmp_path):
    edit_contract(
        app, "      amount: {minimum: 0, maximum: 500}\n",
        "      amount: {minimum: 0, maximum: 500}\n"
        "    approvals: {roles: [lead], count: 2, signed: true}\n",
    )  # fmt: skip
    keys = declare(app, tmp_path / "keys", "ana", "bob", "cy")
    [flow] = pending(app)
    first = run(app, "approve", flow, "--key", str(keys["ana"]), "--json")
    assert json.loads(first.stdout)["status"] == "pending_review", first.stderr
    hold = tmp_path / "hold"
    kill_inside_executor(mir(app, "approve", flow, "--key", str(keys["bob"]), hold=hold), hold)
    assert finals(app, flow) == [] and executions(app) == []
    # whoever comes next finds the claim the killed approval made: in doubt, never run
    after = run(app, "approve", flow, "--key", str(keys["cy"]), "--json")
    assert after.returncode == 1, after.stderr
    assert json.loads(after.stdout)["reasons"][-1] == "execution_in_doubt"
    again = run(app, "approve", flow, "--key", str(keys["cy"]))
    assert again.returncode == 1 and "already aborted" in again.stderr
    assert finals(app, flow) == ["aborted"] and executions(app) == []
    verified(app)


def test_a_first_approval_killed_anywhere_leaves_the_flow_to_finish_once(app, tmp_path):
    edit_contract(
        app, "      amount: {minimum: 0, maximum: 500}\n",
        "      amount: {minimum: 0, maximum: 500}\n"
        "    approvals: {roles: [lead], count: 2, signed: true}\n",
    )  # fmt: skip
    keys = declare(app, tmp_path / "keys", "ana", "bob")
    flows = pending(app, 3)
    rng = random.Random(19)
    for flow in flows:
        proc = mir(app, "approve", flow, "--key", str(keys["ana"]))
        time.sleep(rng.uniform(0.2, 1.5))  # somewhere in its start, its checks or its trace
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # ana again: recorded once at most (a second one is refused, not counted twice)
        redo = run(app, "approve", flow, "--key", str(keys["ana"]), "--json")
        assert redo.returncode == 0 or "already approved" in redo.stderr, redo.stderr
        done = run(app, "approve", flow, "--key", str(keys["bob"]), "--json")
        assert json.loads(done.stdout)["status"] == "executed", done.stderr
        assert finals(app, flow) == ["executed"]
    keys_run = [json.loads(line)["key"] for line in executions(app)]
    assert len(keys_run) == len(flows) == len(set(keys_run))
    verified(app)


DECIDE = """
import json, sys
from mir.runtime import load_agent
root, count = sys.argv[1], int(sys.argv[2])
with load_agent("refunds.triage", project=root, provider="scripted",
                responses=root + "/low.jsonl") as agent:
    for i in range(count):
        record = agent.decide({"order_id": "A1", "amount": 40, "message": f"n{i}"})
        waits = record.status == "pending_review"
        print(record.flow_id if waits else f"?{record.status}:{record.reasons}")
"""


def expired_lines(root: Path) -> int:
    segments = root / ".mir" / "traces" / "segments"
    return sum(p.read_text().count('"status":"expired"') for p in segments.glob("*.jsonl"))


def test_review_expire_killed_mid_batch_closes_each_flow_once(app):
    count = 40
    edit_contract(app, "ttl_seconds: 300\n", "ttl_seconds: 1\n")
    (app / "low.jsonl").write_text((json.dumps(json.dumps(LOW)) + "\n") * count * 2)  # 2 routes
    made = run_python(DECIDE, str(app), str(count), cwd=app)
    flows = made.stdout.split()
    assert len(flows) == count and not [f for f in flows if f[0] == "?"], flows
    time.sleep(1.2)
    proc = subprocess.Popen([str(MIR), "review", "expire"], cwd=app, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and expired_lines(app) < 3:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "expire finished before it could be killed"
    closed = sum(bool(finals(app, flow)) for flow in flows)
    assert 0 < closed < count, closed  # killed in the middle of its batch
    rest = run(app, "review", "expire", "--json")
    assert rest.returncode == 0, rest.stderr
    for flow in flows:
        assert finals(app, flow) == ["expired"], flow
        late = run(app, "approve", flow, "--by", "ana")
        assert late.returncode != 0
    assert executions(app) == []
    assert run(app, "review", "list", "--json").stdout.count('"flow_id"') == 0
    done = run(app, "traces", "verify", "--full")
    assert done.returncode == 0, done.stdout + done.stderr
