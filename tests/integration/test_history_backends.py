"""One contract, both backends: the eval history and the model registry history in
DuckDB (one host) and on the fleet store's Postgres (every host), held to the same
tests: round trip, 1,000 case rows in bulk, two processes recording at once, the same
rows from either backend, an edit's transaction, and a store that is down."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mir.evals.baselines import baseline_of
from mir.evals.history import EvalHistory
from mir.models.history import ModelChange, ModelHistory
from tests.integration.test_eval_history import _report
from tests.unit.evals.gate_factories import make_suite

pytestmark = pytest.mark.fleet

REPO = Path(__file__).resolve().parents[2]
START = datetime(2026, 11, 1, tzinfo=UTC)


def _postgres_evals(url: str, timeout: float = 5.0):
    from mir.evals.history_pg import PostgresEvalHistory
    from mir.storage import FleetStore, StoreSettings

    return PostgresEvalHistory(FleetStore.shared(url, StoreSettings(connect_timeout=timeout)))


def _postgres_models(url: str, timeout: float = 5.0):
    from mir.models.history_pg import PostgresModelHistory
    from mir.storage import FleetStore, StoreSettings

    return PostgresModelHistory(FleetStore.shared(url, StoreSettings(connect_timeout=timeout)))


@pytest.fixture(params=["duckdb", "postgres"])
def backend(request, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where): a DuckDB folder or a Postgres URL."""
    if request.param == "duckdb":
        yield "duckdb", str(tmp_path)
    else:
        yield "postgres", request.getfixturevalue("pg_url")


def _evals(kind: str, where: str) -> Any:
    if kind == "duckdb":
        return EvalHistory(Path(where) / ".mir" / "evals.duckdb", lock_timeout=30)
    return _postgres_evals(where)


def _models(kind: str, where: str) -> Any:
    return ModelHistory(Path(where)) if kind == "duckdb" else _postgres_models(where)


# ---------------------------------------------------------------- eval history


def test_record_and_read_back(backend):
    history = _evals(*backend)
    assert history.rows("triage") == []  # nothing recorded yet: nothing, no error
    first = _report({"a": True, "b": True, "c": False})
    second = _report({"a": False, "b": True, "c": True}, baseline=baseline_of(first.suites[0]))
    (run_1,) = history.record(first, at=START)
    (run_2,) = history.record(second, at=START + timedelta(hours=1), origin="promotion gate q@2")
    history.record(_report({"z": True}, agent="refunds"), at=START)
    rows = history.rows("triage")  # the short name finds desk.triage
    assert [r.run_id for r in rows] == [run_1, run_2]  # oldest first
    assert rows[0].pass_rate == pytest.approx(2 / 3) and rows[0].broken is None
    assert (rows[1].broken, rows[1].fixed, rows[1].p_value) == (1, 1, 1.0)
    assert rows[1].gate_passed and rows[1].model == "script" and rows[1].prompt_hash == "p1"
    assert rows[1].recorded_at == START + timedelta(hours=1)
    assert (rows[0].origin, rows[1].origin) == (None, "promotion gate q@2")
    assert [r.run_id for r in history.rows("desk.triage", limit=1)] == [run_2]
    assert len(history.rows("refunds")) == 1 and history.rows("nobody") == []
    cases = history.case_rows(run_2)
    assert [(c["case_id"], c["passed"], c["change"]) for c in cases] == [
        ("a", False, "broken"),
        ("b", True, None),
        ("c", True, "fixed"),
    ]
    assert cases[0]["failed"] == "action: expected 'reply', got 'escalate'"
    assert history.case_rows("no-such-run") == []
    assert make_suite(["a"], agent="desk.triage").agent == rows[0].agent


def test_both_backends_read_back_the_same_rows(tmp_path: Path, pg_url: str):
    local, fleet = _evals("duckdb", str(tmp_path)), _postgres_evals(pg_url)
    first = _report({"a": True, "b": False, "c": True})
    second = _report({"a": False, "b": True, "c": True}, baseline=baseline_of(first.suites[0]))
    ids: dict[str, list[str]] = {"local": [], "fleet": []}
    for n, report in enumerate((first, second)):
        for name, history in (("local", local), ("fleet", fleet)):
            ids[name] += history.record(report, at=START + timedelta(minutes=n))

    def runs(history) -> list[dict]:
        return [row.model_dump(exclude={"run_id"}) for row in history.rows("triage")]

    def cases(history, run_ids: list[str]) -> list[list[dict]]:
        return [[{**c, "run_id": "-"} for c in history.case_rows(i)] for i in run_ids]

    assert runs(local) == runs(fleet) and len(runs(local)) == 2
    assert cases(local, ids["local"]) == cases(fleet, ids["fleet"])
    assert all(len(c) == 3 for c in cases(fleet, ids["fleet"]))


def test_a_thousand_cases_record_in_bulk(backend):
    report = _report({f"case-{i:04d}": i % 10 != 7 for i in range(1000)})
    history = _evals(*backend)
    history.record(report)  # creates the tables
    began = time.perf_counter()
    (run_id,) = history.record(report)
    elapsed = time.perf_counter() - began
    rows = history.case_rows(run_id)
    assert [r["case_id"] for r in rows] == [f"case-{i:04d}" for i in range(1000)]  # in order
    assert elapsed < 2.0, f"recording 1,000 case runs took {elapsed:.2f}s"


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from tests.integration.test_history_backends import _evals
    from tests.integration.test_eval_history import _report
    history = _evals(sys.argv[1], sys.argv[2])
    sys.stdin.readline()  # both start at once
    for n in range(8):
        history.record(_report({{f"{{sys.argv[3]}}-{{n}}": True}}))
    """
)


def test_two_processes_recording_at_once_both_land(backend):
    kind, where = backend
    script = WRITER.format(repo=str(REPO))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", script, kind, where, name],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    history = _evals(kind, where)
    rows = history.rows("triage", limit=100)
    assert len(rows) == 16
    assert sorted(history.case_rows(r.run_id)[0]["case_id"] for r in rows) == sorted(
        f"{side}-{n}" for side in ("left", "right") for n in range(8)
    )


def test_a_store_that_is_down_is_one_line_and_try_record_keeps_going(pg_server_private):
    from mir.storage import StoreUnavailable

    history = _postgres_evals(pg_server_private.url(), timeout=1)  # fail fast once down
    history.record(_report({"a": True}))
    pg_server_private.stop()
    try:
        fresh = _postgres_evals(pg_server_private.url())  # already migrated: no new pool
        warning = fresh.try_record(_report({"a": True}))
        assert warning is not None and warning.startswith("eval history not recorded:")
        assert "unreachable" in warning and "\n" not in warning
        with pytest.raises(StoreUnavailable) as caught:
            fresh.rows("triage")
        assert "\n" not in str(caught.value)
    finally:
        pg_server_private.start()
    # back: the pool (1 s timeout) reconnects within a few tries on a loaded machine
    for attempt in range(20):
        try:
            rows = _postgres_evals(pg_server_private.url()).rows("triage")
            break
        except StoreUnavailable:
            if attempt == 19:
                raise
            time.sleep(0.5)
    assert len(rows) == 1


# ---------------------------------------------------------------- model history


def _change(version: str, to: str, minute: int, **extra) -> ModelChange:
    return ModelChange(
        name=extra.pop("name", "qwen"),
        version=version,
        from_stage=extra.pop("from_stage", None),
        to_stage=to,
        by="ana",
        at=START + timedelta(minutes=minute),
        **extra,
    )


def test_model_changes_round_trip_in_order(backend):
    history = _models(*backend)
    assert history.changes() == [] and history.changes("qwen") == []
    made = [
        _change("1", "candidate", 0),
        _change("1", "production", 1, from_stage="candidate", why="first"),
        _change("2", "refused", 2, from_stage="candidate", gate={"passed": False, "n": 3}),
        _change("9", "candidate", 1, name="other"),
        _change("2", "canary", 2, from_stage="candidate", share=0.1, forced=True),
    ]
    history.record(made[:3])
    history.record(made[3:])
    assert history.changes("qwen") == [made[0], made[1], made[2], made[4]]  # at, then order
    assert history.changes() == [made[0], made[1], made[3], made[2], made[4]]
    assert history.changes("qwen")[2].gate == {"passed": False, "n": 3}


def test_an_edits_transaction_commits_or_rolls_back(backend):
    history = _models(*backend)
    history.record([_change("1", "candidate", 0), _change("1", "refused", 1)])
    with history.writing() as log:
        log.begin()
        assert log.latest_stages() == {("qwen", "1"): "candidate"}  # refused moved nothing
        log.insert([_change("1", "production", 2, from_stage="candidate")])
        log.rollback()  # (the file write failed)
    assert len(history.changes("qwen")) == 2
    with history.writing() as log:
        log.begin()
        log.insert([_change("1", "production", 3, from_stage="candidate")])
        log.commit()
    with history.writing() as log:
        log.begin()
        assert log.latest_stages() == {("qwen", "1"): "production"}
        log.insert([_change("2", "candidate", 4)])
        # neither committed nor rolled back (an error on the way out): nothing kept
    assert [c.to_stage for c in history.changes("qwen")] == ["candidate", "refused", "production"]


def test_both_backends_list_the_same_model_changes(tmp_path: Path, pg_url: str):
    made = [
        _change("1", "candidate", 0),
        _change("1", "production", 0, from_stage="candidate", gate={"suite": "x", "ok": True}),
    ]
    local, fleet = _models("duckdb", str(tmp_path)), _postgres_models(pg_url)
    local.record(made)
    fleet.record(made)
    assert local.changes() == fleet.changes() == made


def test_the_model_history_of_a_store_that_is_down_is_one_line(pg_server_private):
    from mir.storage import StoreUnavailable

    history = _postgres_models(pg_server_private.url(), timeout=1)  # fail fast once down
    history.record([_change("1", "candidate", 0)])
    pg_server_private.stop()
    try:
        for call in (lambda: history.changes("qwen"), lambda: history.record([])):
            with pytest.raises(StoreUnavailable) as caught:
                call()
            assert "\n" not in str(caught.value)
    finally:
        pg_server_private.start()


def test_an_edited_postgres_table_is_one_line_and_nothing_is_lost(pg_url: str):
    import psycopg

    from mir.errors import ConfigError
    from mir.evals.history import EvalHistoryError

    evals, models = _postgres_evals(pg_url), _postgres_models(pg_url)
    evals.record(_report({"a": True}))
    models.record([_change("1", "candidate", 0)])
    with psycopg.connect(pg_url, autocommit=True) as con:  # someone "tidied" the tables
        con.execute("ALTER TABLE mir.eval_runs DROP COLUMN model")
        con.execute("ALTER TABLE mir.model_changes DROP COLUMN to_stage")
    with pytest.raises(EvalHistoryError) as caught:
        evals.rows("triage")
    said = str(caught.value)
    assert 'not a usable eval history (column "model" does not exist)' in said
    assert "\n" not in said
    warning = evals.try_record(_report({"a": True}))
    assert warning is not None and warning.startswith("eval history not recorded: ")
    assert "not a usable eval history" in warning
    with pytest.raises(ConfigError) as refused:
        models.changes("qwen")
    assert 'not a usable model history (column "to_stage" does not exist)' in str(refused.value)
    with pytest.raises(ConfigError):
        models.record([_change("2", "candidate", 1)])
