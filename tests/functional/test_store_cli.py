"""`mir store status` and `mir store migrate` as a user runs them: a project that decided
and suspended locally switches to the fleet store, is warned, migrates once, and its
keys stay claimed and its suspension obeyed there; refusals are one line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE

pytestmark = pytest.mark.fleet

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
TICKET = json.dumps({"order_id": "A1", "amount": 40, "message": "broken"})


def _host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    (root / "good.jsonl").write_text(json.dumps(json.dumps(GOOD)) + "\n")
    return root


def _env(url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MIR_STORE_URL"}
    return {**env, "NO_COLOR": "1", **({"MIR_STORE_URL": url} if url else {})}


def _mir(root: Path, url: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MIR_EXE), *args], cwd=root, env=_env(url), capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def _decide(root: Path, url: str | None) -> dict:
    done = _mir(root, url, "run", "agent", "refunds.triage", "--input", TICKET,
                "--provider", "scripted", "--responses", "good.jsonl", "--json")  # fmt: skip
    return json.loads(done.stdout)


def _executed(root: Path) -> int:
    log = root / "executed.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _local_keys(root: Path) -> list[str]:
    con = sqlite3.connect(root / ".mir" / "executions.db")
    try:
        return [row[0] for row in con.execute("SELECT key FROM executions")]
    finally:
        con.close()


def _one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.fixture
def decided(tmp_path: Path) -> Path:
    """Two refunds executed and the agent suspended, all with the local backend."""
    root = _host(tmp_path)
    assert [_decide(root, None)["status"] for _ in range(2)] == ["executed", "executed"]
    assert (
        _mir(root, None, "agents", "suspend", "refunds.triage", "--reason", "drift").returncode == 0
    )
    assert _mir(root, None, "store", "status").stdout.startswith("backend: local files")
    return root


def test_local_history_is_carried_into_the_fleet_once(decided: Path, pg_url: str):
    root = decided
    warned = _mir(root, pg_url, "store", "status")
    assert warned.returncode == 1 and "warning:" in warned.stdout
    assert "run `mir store migrate`" in warned.stdout and ".mir/executions.db" in warned.stdout
    dry = _mir(root, pg_url, "store", "migrate", "--dry-run")
    assert dry.returncode == 0 and "execution keys: would copy 2" in dry.stdout, dry.stderr
    assert _mir(root, pg_url, "store", "status").returncode == 1  # nothing written
    done = _mir(root, pg_url, "store", "migrate", "--json")
    report = json.loads(done.stdout)
    assert (report["executions"]["copied"], report["agent_states"]["copied"]) == (2, 1)
    assert report["kept"] == ["executions.db", "agents.json"]
    calm = _mir(root, pg_url, "store", "status")
    assert calm.returncode == 0 and "migrated at" in calm.stdout and "warning" not in calm.stdout
    assert "execution keys: 2" in calm.stdout and "suspended: 1" in calm.stdout
    again = _mir(root, pg_url, "store", "migrate")
    assert "execution keys: copied 0, already there 2" in again.stdout
    # the suspension is obeyed by the fleet's next decision: the rules decide, no refund
    before = _executed(root)
    record = _decide(root, pg_url)
    assert "agent_suspended" in record["reasons"]
    assert record["status"] != "executed" or record["decision"]["action"] == "escalate"
    assert _executed(root) <= before + 1
    # at most once, carried over: no key executed locally can be claimed in the fleet
    from mir.runtime.ledger_pg import PostgresExecutionLedger
    from mir.storage import FleetStore

    ledger = PostgresExecutionLedger(FleetStore.shared(pg_url))
    keys = _local_keys(root)
    assert len(keys) == 2 and not any(ledger.claim(key, {}) for key in keys)
    assert all(ledger.outcome(key)["ok"] for key in keys)


def test_two_migrations_at_once_copy_each_row_once(decided: Path, pg_url: str):
    args = [str(MIR_EXE), "store", "migrate", "--json"]
    procs = [subprocess.Popen(args, cwd=decided, env=_env(pg_url), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    reports = [json.loads(out) for out, _err in outs]
    assert sum(r["executions"]["copied"] for r in reports) == 2
    assert sum(r["executions"]["copied"] + r["executions"]["already"] for r in reports) == 4
    assert sum(r["agent_states"]["copied"] for r in reports) == 1
    assert all(r["executions"]["conflicts"] == 0 for r in reports)


def test_without_a_fleet_url_migrate_is_refused_in_one_line(tmp_path: Path):
    root = _host(tmp_path)
    _one_error_line(_mir(root, None, "store", "migrate"), "no fleet store is configured")


def test_a_server_that_is_down_is_one_line(pg_server_private, tmp_path: Path):
    root = _host(tmp_path)
    pg_server_private.stop()
    for command in (("store", "status"), ("store", "migrate")):
        _one_error_line(_mir(root, pg_server_private.url(), *command), "unreachable")


@pytest.mark.parametrize("name", ["executions.db", "agents.json"])
def test_a_damaged_local_file_is_refused_naming_it(decided: Path, pg_url: str, name: str):
    for stale in (f"{name}-wal", f"{name}-shm"):
        (decided / ".mir" / stale).unlink(missing_ok=True)
    (decided / ".mir" / name).write_bytes(b"\x00 not what mir writes " * 64)
    for command in (("store", "migrate"), ("store", "status")):
        _one_error_line(_mir(decided, pg_url, *command), name)
