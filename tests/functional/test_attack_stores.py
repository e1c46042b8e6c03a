"""Attacks on what mir stores (H8): hostile state files and inputs large enough to damage
the trace store, through the real ``mir`` CLI on a copy of examples/support_desk."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE
from tests.functional.test_attack_reviewers import copy_desk, pending


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_desk(tmp_path, monkeypatch)


@pytest.mark.parametrize("content", ["[]", '{"refunds.triage": 5}', '{"refunds.triage": null}'])
def test_an_agent_state_file_of_the_wrong_shape_is_one_line_exit_2(run_mir, desk, content):
    """`agents.json` that parses but is not {agent: {...}}: `agents list` raised
    AttributeError (traceback), and `[]` read as "no state" (a suspended agent resumed)."""
    (desk / ".mir").mkdir()
    (desk / ".mir" / "agents.json").write_text(content, encoding="utf-8")
    for args in (("agents", "list"), ("agents", "suspend", "refunds.triage", "--reason", "x")):
        done = run_mir(*args, cwd=desk)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert "agent state file is corrupt" in done.stderr


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("at", 12345, "at is 12345, not text"),
        ("at", "yesterday", "at is 'yesterday', not an ISO time"),
        ("by", ["ana"], "by is ['ana'], not text"),
        ("state", "paused", "state is 'paused', not one of active, suspended"),
    ],
)
def test_a_hand_edited_agent_state_field_is_one_line_naming_the_file(
    run_mir, desk, field, value, said
):
    """A non-string `at` in `agents.json` gave a pydantic traceback in `agents list`;
    a non-ISO one, a ValueError in drift's recovery of its own suspensions."""
    state = desk / ".mir" / "agents.json"
    entry = {"state": "suspended", "reason": "x", "by": "mir drift", "at": "2026-01-01T00:00:00"}
    state.parent.mkdir()
    state.write_text(json.dumps({"refunds.triage": {**entry, field: value}}), encoding="utf-8")
    for args in (("agents", "list"), ("agents", "resume", "refunds.triage"), ("drift", "check")):
        done = run_mir(*args, cwd=desk)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        [line] = done.stderr.strip().splitlines()
        assert str(state) in line and "agent state file is corrupt" in line, line
        assert f"'refunds.triage': {said}" in line, line


def test_a_huge_input_is_refused_and_does_not_break_the_trace_store(run_mir, desk, tmp_path):
    """A 40 MB ticket message: refused (`input_invalid`), but the refused input was stored
    verbatim in its snapshot event, a 40 MB segment line that DuckDB will not read
    (maximum_object_size 16 MB), so `mir traces list` failed for every flow, blaming
    `traces.duckdb` ("move it aside")."""
    ticket = json.loads((desk / "inputs" / "blender_broken.json").read_text(encoding="utf-8"))
    ticket["message"] = "x" * 40_000_000
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(ticket), encoding="utf-8")
    earlier = pending(run_mir, desk)
    done = run_mir(
        "run", "agent", "refunds.triage", "--input", f"@{huge}", "--provider", "scripted",
        "--responses", "responses/blender_broken.jsonl", "--json", cwd=desk,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "rejected" and record["reasons"] == ["input_invalid"]
    listed = run_mir("traces", "list", "--json", cwd=desk)
    assert listed.returncode == 0, listed.stderr
    flows = {f["flow_id"]: f["status"] for f in json.loads(listed.stdout)}
    assert flows == {earlier: "pending_review", record["flow_id"]: "rejected"}
    assert sum(p.stat().st_size for p in (desk / ".mir").rglob("*") if p.is_file()) < 5_000_000
    assert run_mir("traces", "verify", cwd=desk).returncode == 0
    assert run_mir("approve", earlier, "--by", "ana", cwd=desk).returncode == 0


def test_an_expired_decision_is_not_revived_by_a_longer_ttl_in_the_contract(run_mir, desk):
    """TTL was read from the contract as it is at approve time: editing `ttl_seconds` from 1
    to 3600 after the decision expired made `mir approve` execute it."""
    contract = desk / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text(encoding="utf-8")
    assert "ttl_seconds: 3600" in text
    contract.write_text(text.replace("ttl_seconds: 3600", "ttl_seconds: 1"), encoding="utf-8")
    flow = pending(run_mir, desk)
    time.sleep(2.5)
    contract.write_text(text, encoding="utf-8")  # the deploy after: a longer TTL
    done = run_mir("approve", flow, "--by", "ana", "--json", cwd=desk)
    record = json.loads(done.stdout)
    assert record["status"] == "stale" and "ttl_expired" in record["reasons"], record
    assert not record["executed"]


GATEWAY = """


def issue_refund(params, *, idempotency_key):  # an outside gateway the loader cannot see
    import time

    with open(PROJECT / "gateway.log", "a") as log:
        log.write(idempotency_key + "\\n")
    time.sleep(30)
    return {"paid": True}
"""


def test_a_deleted_execution_ledger_does_not_make_a_killed_execution_run_twice(run_mir, desk):
    """Kill `mir approve` while the executor runs, delete `.mir/executions.db`, approve
    again: the key looked never claimed, so the decision was re-checked and the gateway
    was called a second time."""
    adapters = desk / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(adapters.read_text(encoding="utf-8") + GATEWAY, encoding="utf-8")
    flow = pending(run_mir, desk)
    gateway = desk / "gateway.log"
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    first = subprocess.Popen(
        [str(MIR_EXE), "approve", flow, "--by", "ana"], cwd=desk, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (gateway.exists() and gateway.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    first.kill()
    first.wait()
    assert gateway.read_text().count("\n") == 1
    for path in (desk / ".mir").glob("executions.db*"):
        path.unlink()
    again = run_mir("approve", flow, "--by", "bob", "--json", cwd=desk, timeout=60)
    assert gateway.read_text().count("\n") == 1, "the executor ran twice"
    record = json.loads(again.stdout)
    assert record["status"] == "aborted" and "execution_in_doubt" in record["reasons"], record
