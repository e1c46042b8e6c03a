"""Every database as the code before the one migration runner wrote it (each store its
own ``_migrations (name, applied_at)`` table, or ``PRAGMA user_version`` / bare tables for
the SQLite files) opens, reads and migrates: nothing is applied twice, every step is
then recorded in ``_mir_migrations``. The old schema SQL is spelled out here, as that
code wrote it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from mir.alerts import SentLog
from mir.evals.history import EvalHistory
from mir.inference import ModelResponse, ResponseCache
from mir.models.history import ModelChange, ModelHistory
from mir.runtime.ledger import SqliteExecutionLedger
from mir.storage import recorded
from mir.traces import TraceStore
from tests.integration.test_eval_history import _report

OLD_TRACES = (
    "CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)",
    "CREATE TABLE events (segment VARCHAR NOT NULL, n BIGINT NOT NULL, v INTEGER, "
    'hash VARCHAR, "event_id" VARCHAR, "flow_id" VARCHAR, "seq" BIGINT, '
    '"step" VARCHAR, "agent" VARCHAR, "at" TIMESTAMPTZ, "status" VARCHAR, '
    '"reasons" VARCHAR[], "provider" VARCHAR, "model" VARCHAR, "prompt_hash" VARCHAR, '
    '"prompt_version" VARCHAR, "prompt_tokens" BIGINT, "completion_tokens" BIGINT, '
    '"cost_usd" DOUBLE, "latency_ms" DOUBLE, "data" VARCHAR)',
    "CREATE TABLE segments (name VARCHAR PRIMARY KEY, lines BIGINT NOT NULL, "
    "head VARCHAR, compacted_at TIMESTAMPTZ NOT NULL)",
    "CREATE TABLE shadowed (segment VARCHAR NOT NULL, n BIGINT NOT NULL)",
    "CREATE TABLE adopted (name VARCHAR PRIMARY KEY)",
    "CREATE TABLE drift_metrics (run_id VARCHAR NOT NULL, agent VARCHAR NOT NULL, "
    "metric VARCHAR NOT NULL, kind VARCHAR NOT NULL, "
    "reference_start TIMESTAMPTZ, reference_end TIMESTAMPTZ, "
    "current_start TIMESTAMPTZ, current_end TIMESTAMPTZ, reference_n BIGINT, "
    "current_n BIGINT, reference_value DOUBLE, current_value DOUBLE, value DOUBLE, "
    "p_value DOUBLE, warn DOUBLE, suspend DOUBLE, verdict VARCHAR NOT NULL, "
    'window_spec VARCHAR, "at" TIMESTAMPTZ NOT NULL)',
    "CREATE TABLE drift_references (agent VARCHAR NOT NULL, name VARCHAR NOT NULL, "
    "first_flow_at TIMESTAMPTZ NOT NULL, last_flow_at TIMESTAMPTZ NOT NULL, "
    'flows BIGINT NOT NULL, "at" TIMESTAMPTZ NOT NULL, PRIMARY KEY (agent, name))',
    "CREATE TABLE drift_rows (segment VARCHAR NOT NULL, n BIGINT NOT NULL, "
    'agent VARCHAR, flow_id VARCHAR, "at" TIMESTAMPTZ, status VARCHAR, '
    "reasons VARCHAR[], provider VARCHAR, model VARCHAR, cost_usd DOUBLE, "
    "src VARCHAR, contract_hash VARCHAR, prompt_hashes VARCHAR[], latency_ms DOUBLE, "
    "tokens DOUBLE, decision VARCHAR)",
    "CREATE TABLE drift_ingested (ingested_segment VARCHAR PRIMARY KEY, "
    "upto BIGINT NOT NULL, events BIGINT NOT NULL)",
    "INSERT INTO _migrations VALUES ('0001_create_events', now()), "
    "('0002_create_segments', now()), ('0003_create_shadowed', now()), "
    "('0004_create_adopted', now()), ('0005_create_drift', now()), "
    "('0006_create_drift_rows', now())",
    "INSERT INTO events (segment, n, v, hash, event_id, flow_id, seq, step, agent, "
    '"at", reasons, prompt_tokens, completion_tokens, cost_usd, latency_ms, data) '
    "VALUES ('old.jsonl', 0, 1, 'h', 'e1', 'f-old', 0, 'final', 'desk.a', now(), [], "
    "0, 0, 0, 0, '{}')",
    "INSERT INTO segments VALUES ('old.jsonl', 1, 'h', now())",
    "INSERT INTO drift_references VALUES ('desk.a', 'base', now(), now(), 3, now())",
)


def test_a_trace_database_from_before_reads_then_migrates_without_reapplying(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    con = duckdb.connect(str(folder / "traces.duckdb"))
    for sql in OLD_TRACES:
        con.execute(sql)
    con.close()
    store = TraceStore(folder, environ={})
    assert store.count_events() == 1  # read as it is: nothing was pending
    con = duckdb.connect(str(folder / "traces.duckdb"), read_only=True)
    assert recorded(con, "traces") == []  # a reader writes nothing
    con.close()
    from mir.drift import tables

    with store.analysis(write=True, tables=tables.TABLES) as (con, events, writable):
        assert writable
        assert sorted(recorded(con, "traces")) == [
            "0001_create_events",
            "0002_create_segments",
            "0003_create_shadowed",
            "0004_create_adopted",
        ]
        assert sorted(recorded(con, "drift")) == [
            "0005_create_drift",
            "0006_create_drift_rows",
            "0007_create_drift_lake_rows",
        ]
        # the old rows are where they were: no step ran again over them
        assert con.execute("SELECT count(*) FROM drift_references").fetchone()[0] == 1
        assert con.execute(f"SELECT count(*) FROM ({events()})").fetchone()[0] == 1
    assert [e.flow_id for e in store.flow("f-old")] == ["f-old"]


def test_a_ledger_from_before_keeps_its_claims(tmp_path):
    path = tmp_path / "executions.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(
        "CREATE TABLE IF NOT EXISTS executions (key TEXT PRIMARY KEY, claimed_us INTEGER "
        "NOT NULL, info TEXT NOT NULL, outcome TEXT, completed_us INTEGER) WITHOUT ROWID"
    )
    con.execute(
        "CREATE TABLE IF NOT EXISTS flows (flow_id TEXT PRIMARY KEY, state TEXT NOT NULL, "
        "final TEXT, by TEXT NOT NULL, at_us INTEGER NOT NULL, owner TEXT NOT NULL, "
        "host TEXT NOT NULL, pid INTEGER NOT NULL, started INTEGER) WITHOUT ROWID"
    )
    con.execute("INSERT INTO executions VALUES ('k1', 1, '{}', '{\"ok\": true}', 2)")
    con.execute("PRAGMA user_version=1")
    con.close()
    ledger = SqliteExecutionLedger(path)
    assert ledger.claimed("k1") and ledger.outcome("k1") == {"ok": True}
    assert not ledger.claim("k1", {})
    ledger.close()
    con = sqlite3.connect(path)
    assert recorded(con, "ledger") == ["0001_create_executions", "0002_create_flows"]


def test_an_eval_history_from_before_gains_the_runner_table(tmp_path):
    path = tmp_path / "evals.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ)")
    con.execute(
        "CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, recorded_at TIMESTAMPTZ NOT NULL, "
        "suite VARCHAR NOT NULL, agent VARCHAR NOT NULL, started_at TIMESTAMPTZ, "
        "finished_at TIMESTAMPTZ, provider VARCHAR, model VARCHAR, prompt_hash VARCHAR, "
        "contract_hash VARCHAR, runs INTEGER, passed INTEGER, cases INTEGER, "
        "pass_rate DOUBLE, broken INTEGER, fixed INTEGER, p_value DOUBLE, "
        "gate_passed BOOLEAN, reasons VARCHAR[], interrupted BOOLEAN, ece DOUBLE, "
        "position_consistency DOUBLE)"
    )
    con.execute(
        "CREATE TABLE case_results (run_id VARCHAR NOT NULL, case_id VARCHAR NOT NULL, "
        '"repeat" INTEGER NOT NULL, passed BOOLEAN, status VARCHAR, action VARCHAR, '
        "change VARCHAR, confidence DOUBLE, latency_ms DOUBLE, tokens BIGINT, "
        "cached BOOLEAN, error VARCHAR, failed VARCHAR)"
    )
    con.execute("INSERT INTO _migrations VALUES ('0001_create_runs', now())")
    con.execute("INSERT INTO _migrations VALUES ('0002_create_case_results', now())")
    con.close()  # written before 0003_runs_origin existed
    history = EvalHistory(path)
    history.record(_report({"a": True}), origin="promotion gate m@1")
    [row] = history.rows("desk.triage")
    assert row.origin == "promotion gate m@1"
    con = duckdb.connect(str(path), read_only=True)
    assert recorded(con, "evals") == [
        "0001_create_runs",
        "0002_create_case_results",
        "0003_runs_origin",
    ]


def test_a_model_history_from_before_keeps_its_changes(tmp_path):
    path = tmp_path / ".mir" / "models.duckdb"
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ)")
    con.execute(
        "CREATE TABLE model_changes (name VARCHAR NOT NULL, version VARCHAR NOT NULL, "
        'from_stage VARCHAR, to_stage VARCHAR NOT NULL, share DOUBLE, "by" VARCHAR NOT NULL, '
        '"at" TIMESTAMPTZ NOT NULL, why VARCHAR, forced BOOLEAN NOT NULL, gate VARCHAR)'
    )
    con.execute("INSERT INTO _migrations VALUES ('0001_create_model_changes', now())")
    con.execute(
        "INSERT INTO model_changes VALUES ('m', '1', NULL, 'staging', NULL, 'ana', now(), "
        "NULL, false, NULL)"
    )
    con.close()
    history = ModelHistory(tmp_path)
    at = datetime(2030, 1, 2, tzinfo=UTC)  # after the old row's
    refused = ModelChange(
        name="m", version="1", from_stage="staging", to_stage="refused", by="bo", at=at
    )
    history.record([refused])
    assert [c.to_stage for c in history.changes("m")] == ["staging", "refused"]


def test_the_sqlite_cache_and_alert_log_from_before_keep_their_rows(tmp_path):
    con = sqlite3.connect(tmp_path / "responses.sqlite3")
    con.execute(
        "CREATE TABLE IF NOT EXISTS responses ("
        "key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)"
    )
    con.commit()
    con.close()
    cache = ResponseCache(
        tmp_path, warn=lambda message: (_ for _ in ()).throw(AssertionError(message))
    )
    cache.put("k", ModelResponse(text="{}", model="m", provider="scripted"))
    assert cache.get("k") is not None and cache.enabled
    cache.close()
    state = tmp_path / "state"
    state.mkdir()
    con = sqlite3.connect(state / SentLog(state).path.name)
    con.execute(
        "CREATE TABLE IF NOT EXISTS sent (flow_id TEXT NOT NULL, kind TEXT NOT NULL, "
        "period INTEGER NOT NULL, at_us INTEGER NOT NULL, "
        "PRIMARY KEY (flow_id, kind, period)) WITHOUT ROWID"
    )
    con.execute("INSERT INTO sent VALUES ('f', 'review', 0, 1)")
    con.commit()
    con.close()
    log = SentLog(state)
    assert log.claim([("f", "review", 0), ("g", "review", 0)]) == [("g", "review", 0)]
    assert recorded(sqlite3.connect(log.path), "alerts") == ["0001_create_sent"]


def test_a_database_from_a_newer_mir_is_refused_in_one_line(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "evals.duckdb"
    EvalHistory(path).record(_report({"a": True}))
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO _mir_migrations VALUES ('evals', '0099_future', '2030-01-01')")
    con.close()
    code = (
        "import sys; from pathlib import Path; from mir.evals.history import EvalHistory; "
        "from tests.integration.test_eval_history import _report\n"
        "try:\n    EvalHistory(Path(sys.argv[1])).record(_report({'a': True}))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        timeout=60,
    ).stdout
    assert out.startswith("UnknownMigrationError") and "'0099_future'" in out, out
    assert str(path) in out


def test_a_cache_from_a_newer_mir_is_turned_off_with_one_warning(tmp_path):
    warnings: list[str] = []
    cache = ResponseCache(tmp_path, warn=warnings.append)
    cache.put("k", ModelResponse(text="{}", model="m", provider="scripted"))
    cache.close()
    con = sqlite3.connect(tmp_path / "responses.sqlite3")
    con.execute("INSERT INTO _mir_migrations VALUES ('cache', '0099_future', '2030-01-01')")
    con.commit()
    con.close()
    cache = ResponseCache(tmp_path, warn=warnings.append)
    assert cache.get("k") is None and cache.get("k") is None  # best effort: a miss
    assert not cache.enabled
    assert len(warnings) == 1 and "'0099_future'" in warnings[0]


def test_an_eval_history_from_a_newer_mir_is_a_warning_not_a_lost_report(tmp_path):
    path = tmp_path / "evals.duckdb"
    history = EvalHistory(path)
    history.record(_report({"a": True}))
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO _mir_migrations VALUES ('evals', '0099_future', '2030-01-01')")
    con.close()
    warning = history.try_record(_report({"a": True}))
    assert warning and "'0099_future'" in warning and str(path) in warning
