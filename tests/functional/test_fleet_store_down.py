"""The fleet store stopped under `mir run agent`: the decision fails closed (reason
store_unavailable, recorded in the local trace, no executor run, no traceback) and the
next one after the server is back executes; a suspension set on one host through the
CLI is what another host's next decision obeys."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

pytestmark = pytest.mark.fleet

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
TICKET = json.dumps({"order_id": "A1", "amount": 40, "message": "broken"})


def _host(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    (root / "good.jsonl").write_text(json.dumps(json.dumps(GOOD)) + "\n")
    return root


def _mir(root: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "MIR_STORE_URL": url}
    return subprocess.run(
        [str(MIR_EXE), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _decide(root: Path, url: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    done = _mir(root, url, "run", "agent", "refunds.triage", "--input", TICKET,
                "--provider", "scripted", "--responses", "good.jsonl", "--json")  # fmt: skip
    return done, json.loads(done.stdout) if done.stdout.strip() else {}


def _executed(root: Path) -> int:
    log = root / "executed.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_decision_fails_closed_while_the_store_is_down_and_works_again(
    pg_server_private, tmp_path: Path
):
    url = pg_server_private.url()
    root = _host(tmp_path, "host-a")
    done, record = _decide(root, url)
    assert record.get("status") == "executed", done.stderr
    assert _executed(root) == 1
    pg_server_private.stop()
    done, record = _decide(root, url)
    assert record["status"] == "aborted", done.stderr
    assert "store_unavailable" in record["reasons"]
    assert "Traceback" not in done.stderr
    assert _executed(root) == 1  # nothing executed
    shown = _mir(root, url, "traces", "show", record["flow_id"])
    assert "store_unavailable" in shown.stdout  # recorded in the local trace
    pg_server_private.start()
    done, record = _decide(root, url)
    assert record.get("status") == "executed", done.stderr
    assert _executed(root) == 2


def test_a_suspension_on_one_host_is_obeyed_by_the_next_decision_of_another(
    pg_url: str, tmp_path: Path
):
    a, b, c = (_host(tmp_path, name) for name in ("host-a", "host-b", "host-c"))
    assert _decide(a, pg_url)[1]["status"] == "executed"
    held = _mir(c, pg_url, "agents", "suspend", "refunds.triage", "--reason", "drift")
    assert held.returncode == 0, held.stderr
    for host in (a, b):
        done, record = _decide(host, pg_url)
        assert "agent_suspended" in record["reasons"], done.stderr
        assert record["status"] != "executed" or record["decision"]["action"] == "escalate"
    assert _mir(a, pg_url, "agents", "resume", "refunds.triage").returncode == 0
    for host in (b, c):
        done, record = _decide(host, pg_url)
        assert record["status"] == "executed" and "agent_suspended" not in record["reasons"]
    assert not (c / ".mir" / "agents.json").exists()  # the state lives in the fleet store


def test_drift_check_on_host_c_suspends_the_agent_on_every_host(pg_url: str, tmp_path: Path):
    from datetime import UTC, datetime

    from mir.project import find_project
    from mir.traces import TraceStore
    from tests.support import drift_month
    from tests.support.drift_flows import desk

    month = drift_month.load()
    a, b, c = (desk(tmp_path / name) for name in ("a", "b", "c"))
    with TraceStore.for_project(find_project(c)) as traces:  # C's own traces drift
        month.write_month(traces, end=datetime.now(UTC), per_day=30)
    check = _mir(c, pg_url, "drift", "check", "--window", "7d", "--reference", "21d")
    assert check.returncode == 1 and "SUSPENDED by the breaker" in check.stdout, check.stderr
    for host in (a, b):  # their next decision: the rules, no model
        ran = _mir(host, pg_url, "run", "agent", "refunds.triage", "--input",
                   "@inputs/damaged_mug.json", "--json")  # fmt: skip
        record = json.loads(ran.stdout)
        assert record["provider"] == "rules" and "agent_suspended" in record["reasons"]
    assert _mir(a, pg_url, "agents", "resume", "triage").returncode == 0
    scripted = ("--provider", "scripted", "--responses", "responses/blender_broken.jsonl")
    for host in (b, c):
        ran = _mir(host, pg_url, "run", "agent", "refunds.triage", "--input",
                   "@inputs/blender_broken.json", *scripted, "--json")  # fmt: skip
        record = json.loads(ran.stdout)
        assert record["provider"] == "scripted" and "agent_suspended" not in record["reasons"]
