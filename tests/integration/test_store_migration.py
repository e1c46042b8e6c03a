"""`migrate_store` on a real Postgres: a local ledger and agents.json copied once, the
at-most-once guarantee carried over (every local key stays claimed, an unsettled flow
claim stays held), Postgres never overwritten (a conflict kept and counted, a local
suspension wins), a dry run writing nothing, two migrations racing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mir.errors import ConfigError, UsageError
from mir.runtime.agent_states import AgentStateFile
from mir.runtime.ledger import SqliteExecutionLedger
from mir.runtime.store_migration import MARKER, migrate_store, store_status

pytestmark = pytest.mark.fleet
N = 40


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mir]\n')
    return root


def _local_history(root: Path, n: int = N) -> None:
    """n executed keys with their flows settled, one key in doubt, one flow claim left
    unsettled by a process that is gone, and a suspended agent."""
    ledger = SqliteExecutionLedger(root / ".mir" / "executions.db")
    for i in range(n):
        assert ledger.claim(f"k{i}", {"flow_id": f"f{i}", "agent": "refunds.triage"})
        ledger.complete(f"k{i}", {"ok": True, "result": i})
        ledger.settle_flow(f"f{i}", "executed")
    assert ledger.claim("k-doubt", {"agent": "refunds.triage"})  # crashed mid-execution
    ledger.close()
    gone = subprocess.Popen(["true"])
    gone.wait()
    _insert_flow(root, ("f-held", "approved", None, "ana", 1, "o", os.uname().nodename,
                        gone.pid, None))  # fmt: skip
    states = AgentStateFile(root / ".mir" / "agents.json")
    states.set("refunds.triage", "suspended", reason="drift", by="ana")
    states.set("refunds.other", "active", reason=None, by="bo")


def _insert_flow(root: Path, row: tuple) -> None:
    con = sqlite3.connect(root / ".mir" / "executions.db")
    with con:
        con.execute("INSERT INTO flows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
    con.close()


def _fleet(url: str):
    from mir.runtime.agent_states_pg import PostgresAgentStates
    from mir.runtime.ledger_pg import PostgresExecutionLedger
    from mir.storage import FleetStore

    store = FleetStore.shared(url)
    return PostgresExecutionLedger(store), PostgresAgentStates(store), store


def _count(store, table: str) -> int:
    with store.connection() as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def project(tmp_path: Path, pg_url: str, monkeypatch) -> Path:
    monkeypatch.setenv("MIR_STORE_URL", pg_url)
    root = _project(tmp_path / "p")
    _local_history(root)
    return root


def test_every_local_key_stays_claimed_and_the_suspension_is_carried_over(project, pg_url):
    report = migrate_store(project)
    assert (report.executions.copied, report.flows.copied) == (N + 1, N + 1)
    assert report.agent_states.copied == 2 and report.in_doubt == 1 and report.held == 1
    ledger, states, _store = _fleet(pg_url)
    for i in range(N):  # at most once, carried over: no key can be claimed again
        assert ledger.claim(f"k{i}", {}) is False
        assert ledger.outcome(f"k{i}") == {"ok": True, "result": i}
    assert ledger.claim("k-doubt", {}) is False and ledger.outcome("k-doubt") is None
    held = ledger.claim_flow("f-held", "rejected", by="bo")  # its process is gone, yet
    assert not held.won and held.holder.state == "approved"  # never taken over
    assert ledger.claim_flow("f3", "approved", by="bo").holder.final == "executed"
    assert states.is_suspended("refunds.triage") and not states.is_suspended("refunds.other")
    assert json.loads((project / ".mir" / MARKER).read_text())["url"] == report.url
    assert (project / ".mir" / "executions.db").exists()  # kept
    assert store_status(project).warning is None


def test_running_it_again_copies_nothing(project, pg_url):
    migrate_store(project)
    again = migrate_store(project)
    assert (again.executions.copied, again.executions.already) == (0, N + 1)
    assert (again.flows.copied, again.agent_states.copied) == (0, 0)
    assert again.executions.conflicts == again.flows.conflicts == 0
    _ledger, _states, store = _fleet(pg_url)
    assert _count(store, "executions") == N + 1 and _count(store, "flows") == N + 1


def test_a_row_already_in_postgres_is_kept_and_counted_and_suspended_wins(project, pg_url):
    ledger, states, store = _fleet(pg_url)
    assert ledger.claim("k0", {"host": "b"})  # claimed on both sides
    states.set("refunds.triage", "active", reason=None, by="cy")  # resumed in the fleet
    states.set("refunds.other", "suspended", reason="fleet drift", by="cy")
    report = migrate_store(project)
    assert report.executions.conflicts == 1 and report.executions.examples == ["k0"]
    assert report.executions.copied == N
    with store.connection() as con:
        info = con.execute("SELECT info FROM executions WHERE key = 'k0'").fetchone()[0]
    assert json.loads(info) == {"host": "b"}  # Postgres's row, not overwritten
    assert report.suspended == ["refunds.triage"] and states.is_suspended("refunds.triage")
    assert states.read()["refunds.other"]["reason"] == "fleet drift"  # the safer, kept
    assert report.agent_states.conflicts == 1
    assert any("now suspended there" in line for line in report.lines())


def test_a_dry_run_writes_nothing_anywhere(project, pg_url):
    fresh = migrate_store(project, dry_run=True)  # no table yet: every row would be copied
    assert fresh.executions.copied == N + 1 and fresh.dry_run
    _ledger, _states, store = _fleet(pg_url)
    with store.connection() as con:
        assert con.execute("SELECT to_regclass('executions')").fetchone()[0] is None
    _fleet(pg_url)[0].claim("k1", {"host": "b"})  # the tables exist now
    counted = migrate_store(project, dry_run=True)
    assert (counted.executions.copied, counted.executions.conflicts) == (N, 1)
    assert counted.agent_states.copied == 2  # no agent_states table yet: all to copy
    assert _count(store, "executions") == 1 and _count(store, "flows") == 0
    with store.connection() as con:
        assert con.execute("SELECT to_regclass('agent_states')").fetchone()[0] is None
    assert not (project / ".mir" / MARKER).exists()
    assert store_status(project).warning is not None


def test_two_migrations_racing_copy_each_row_once(project, pg_url):
    child = "import sys; from mir.runtime.store_migration import migrate_store as m; " \
            "r = m(sys.argv[1]); print(r.executions.copied, r.agent_states.copied)"  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [subprocess.Popen([sys.executable, "-c", child, str(project)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]  # fmt: skip
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outs
    copied = [tuple(map(int, out.split())) for out, _err in outs]
    assert sum(c[0] for c in copied) == N + 1 and sum(c[1] for c in copied) == 2
    _ledger, _states, store = _fleet(pg_url)
    assert _count(store, "executions") == N + 1 and _count(store, "agent_states") == 2


@pytest.mark.parametrize("name", ["executions.db", "agents.json"])
def test_a_damaged_local_file_is_named_and_nothing_is_copied(project, pg_url, name):
    for stale in (f"{name}-wal", f"{name}-shm"):
        (project / ".mir" / stale).unlink(missing_ok=True)
    (project / ".mir" / name).write_bytes(b"\x00garbage, not what mir writes" * 50)
    with pytest.raises(ConfigError) as caught:
        migrate_store(project)
    assert name in str(caught.value)
    _ledger, _states, store = _fleet(pg_url)
    with store.connection() as con:
        assert con.execute("SELECT to_regclass('executions')").fetchone()[0] is None


def test_a_local_process_still_holding_a_flow_refuses_the_migration(project, pg_url):
    from mir.runtime.ledger import _start_time

    me = os.getpid()
    _insert_flow(project, ("f-live", "approved", None, "ana", 1, "o", os.uname().nodename,
                           me, _start_time(me)))  # fmt: skip
    with pytest.raises(UsageError, match="f-live is held by a running process"):
        migrate_store(project)


def test_no_fleet_url_is_refused(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("MIR_STORE_URL", raising=False)
    root = _project(tmp_path / "local")
    with pytest.raises(UsageError, match="no fleet store is configured"):
        migrate_store(root)
    assert store_status(root).backend == "local"


def test_an_older_executions_folder_is_copied_too(tmp_path: Path, pg_url, monkeypatch):
    monkeypatch.setenv("MIR_STORE_URL", pg_url)
    root = _project(tmp_path / "old")
    folder = root / ".mir" / "executions"
    folder.mkdir(parents=True)
    (folder / "abc123").write_text('{"agent": "a"}\n{"ok": true}\n')
    (folder / "def456").write_text('{"agent": "a"}\n')  # claimed, never completed
    report = migrate_store(root)
    assert report.executions.copied == 2 and report.in_doubt == 1
    ledger = _fleet(pg_url)[0]
    assert ledger.outcome("abc123") == {"ok": True} and ledger.claimed("def456")
    assert folder.is_dir()  # only read


def test_the_local_eval_and_model_histories_are_copied_once(project, pg_url):
    """`mir store migrate` also copies `.mir/evals.duckdb` and `.mir/models.duckdb`: the
    same rows read back from Postgres as from the local files, a dry run writes nothing,
    a second migration copies nothing again."""
    from datetime import UTC, datetime, timedelta

    from mir.evals import copy_eval_history
    from mir.evals.baselines import baseline_of
    from mir.evals.history import EvalHistory
    from mir.evals.history_pg import PostgresEvalHistory
    from mir.models import copy_model_history
    from mir.models.history import ModelChange, ModelHistory
    from mir.models.history_pg import PostgresModelHistory
    from mir.storage import FleetStore
    from tests.integration.test_eval_history import _report

    start = datetime(2026, 11, 1, tzinfo=UTC)
    local = EvalHistory.for_project(__import__("mir.project").project.find_project(project))
    first = _report({"a": True, "b": False, "c": True})
    second = _report({"a": False, "b": True, "c": True}, baseline=baseline_of(first.suites[0]))
    ids = local.record(first, at=start) + local.record(
        second, at=start + timedelta(hours=1), origin="promotion gate q@2"
    )
    changes = [
        ModelChange(name="qwen", version=str(n), from_stage=None, to_stage="candidate",
                    by="ana", at=start + timedelta(minutes=n), why=f"v{n}")
        for n in range(3)
    ]  # fmt: skip
    ModelHistory(project).record(changes)
    copies = {"eval runs": copy_eval_history, "model changes": copy_model_history}
    dry = migrate_store(project, dry_run=True, histories=copies)
    assert (dry.histories["eval runs"].copied, dry.histories["model changes"].copied) == (2, 3)
    store = FleetStore.shared(pg_url)
    with store.connection() as con:  # the dry run created no table
        assert con.execute("SELECT to_regclass('eval_runs')").fetchone()[0] is None
    report = migrate_store(project, histories=copies)
    assert report.histories["eval runs"].model_dump(include={"copied", "already"}) == {
        "copied": 2,
        "already": 0,
    }
    assert report.histories["model changes"].copied == 3
    assert any(line.startswith("eval runs: copied 2") for line in report.lines())
    fleet_evals, fleet_models = PostgresEvalHistory(store), PostgresModelHistory(store)
    assert [r.model_dump() for r in fleet_evals.rows("triage")] == [
        r.model_dump() for r in local.rows("triage")
    ]
    for run_id in ids:
        assert fleet_evals.case_rows(run_id) == local.case_rows(run_id)
    assert fleet_models.changes() == ModelHistory(project).changes()
    again = migrate_store(project, histories=copies)
    assert {k: (v.copied, v.already) for k, v in again.histories.items()} == {
        "eval runs": (0, 2),
        "model changes": (0, 3),
    }
    assert len(fleet_models.changes()) == 3 and len(fleet_evals.rows("triage")) == 2
