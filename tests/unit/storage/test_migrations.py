"""The one migration runner (``mir.storage.migrations``), on DuckDB and sqlite3 alike:
order, idempotence, a failing step, two processes at once, a step from a newer mir,
and files recorded by the per-store runners that came before."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mir.storage import Migration, UnknownMigrationError, migrate, pending, recorded

BACKENDS = ("duckdb", "sqlite")


def opener(kind: str, path: Path) -> Callable[[], Any]:
    if kind == "duckdb":
        return lambda: duckdb.connect(str(path))
    return lambda: sqlite3.connect(path, isolation_level=None)


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    yield request.param, opener(request.param, tmp_path / f"m.{request.param}")


def tables(con: Any) -> set[str]:
    if isinstance(con, sqlite3.Connection):
        rows = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    else:
        rows = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    return {row[0] for row in rows}


STEPS = (
    Migration("0001_a", "CREATE TABLE a (x INTEGER)"),
    Migration("0002_b", ("CREATE TABLE b (y INTEGER)", "INSERT INTO b VALUES (1)")),
    Migration("0003_a_z", lambda con: con.execute("ALTER TABLE a ADD COLUMN z INTEGER")),
)


def test_steps_apply_in_order_once(db):
    _, connect = db
    con = connect()
    assert migrate(con, "thing", STEPS) == ["0001_a", "0002_b", "0003_a_z"]
    assert migrate(con, "thing", STEPS) == []
    assert recorded(con, "thing") == ["0001_a", "0002_b", "0003_a_z"]
    assert con.execute("SELECT count(*) FROM b").fetchone()[0] == 1  # not run twice
    con.close()
    con = connect()  # a new connection (a new process) finds them recorded
    assert migrate(con, "thing", STEPS) == [] and pending(con, "thing", STEPS) == []


def test_a_later_step_is_applied_alone(db):
    _, connect = db
    con = connect()
    migrate(con, "thing", STEPS[:1])
    assert pending(con, "thing", STEPS) == ["0002_b", "0003_a_z"]
    assert migrate(con, "thing", STEPS) == ["0002_b", "0003_a_z"]


def test_scopes_are_apart(db):
    _, connect = db
    con = connect()
    migrate(con, "thing", STEPS[:1])
    other = (Migration("0001_a", "CREATE TABLE other_a (x INTEGER)"),)
    assert migrate(con, "other", other) == ["0001_a"]  # same name, another scope
    assert recorded(con, "thing") == ["0001_a"] and recorded(con, "other") == ["0001_a"]
    assert {"a", "other_a", "_mir_migrations"} <= tables(con)


def test_a_failing_step_leaves_nothing_recorded_and_is_retried(db):
    _, connect = db
    con = connect()
    broken = (
        STEPS[0],
        Migration("0002_b", ("CREATE TABLE b (y INTEGER)", "INSERT INTO nowhere VALUES (1)")),
    )
    with pytest.raises(Exception, match="nowhere"):
        migrate(con, "thing", broken)
    assert recorded(con, "thing") == ["0001_a"]
    assert "b" not in tables(con)  # rolled back with its record
    assert pending(con, "thing", STEPS) == ["0002_b", "0003_a_z"]
    assert migrate(con, "thing", STEPS) == ["0002_b", "0003_a_z"]  # the next run retries


def test_a_function_step_that_raises_is_rolled_back(db):
    _, connect = db
    con = connect()

    def half(c: Any) -> None:
        c.execute("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("killed half way")

    with pytest.raises(RuntimeError, match="half way"):
        migrate(con, "thing", (Migration("0001_half", half),))
    assert "half" not in tables(con) and recorded(con, "thing") == []


def test_a_step_from_a_newer_mir_is_refused_in_one_line(db):
    _, connect = db
    con = connect()
    newer = (*STEPS, Migration("0004_future", "CREATE TABLE future (x INTEGER)"))
    migrate(con, "thing", newer)
    with pytest.raises(UnknownMigrationError) as caught:
        migrate(con, "thing", STEPS)
    assert "'0004_future'" in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 2
    with pytest.raises(UnknownMigrationError):
        pending(con, "thing", STEPS)
    other = (Migration("0001_o", "CREATE TABLE o (x INTEGER)"),)
    assert migrate(con, "other", other) == ["0001_o"]  # another scope is not refused


def test_duplicate_names_are_a_bug():
    with pytest.raises(ValueError, match="duplicate"):
        migrate(duckdb.connect(), "thing", (STEPS[0], STEPS[0]))


def test_steps_an_older_runner_recorded_count_as_applied(db):
    kind, connect = db
    con = connect()
    stamp = "TIMESTAMPTZ" if kind == "duckdb" else "TEXT"
    con.execute(f"CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at {stamp})")
    con.execute(STEPS[0].apply)
    con.execute("INSERT INTO _migrations VALUES ('0001_a', '2026-01-02 03:04:05+00')")
    assert pending(con, "thing", STEPS) == ["0002_b", "0003_a_z"]  # read only: no table yet
    assert "_mir_migrations" not in tables(con)
    assert migrate(con, "thing", STEPS) == ["0002_b", "0003_a_z"]
    assert recorded(con, "thing") == ["0001_a", "0002_b", "0003_a_z"]
    at = con.execute("SELECT applied_at FROM _mir_migrations WHERE name = '0001_a'").fetchone()
    assert at[0].startswith("2026-01-02")  # the older record's time is kept


def test_nothing_pending_writes_nothing(tmp_path):
    path = tmp_path / "m.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, "thing", STEPS)
    con.close()
    reader = duckdb.connect(str(path), read_only=True)
    assert migrate(reader, "thing", STEPS) == []  # a read-only file: no write attempted
    assert pending(reader, "thing", STEPS) == []


_RACE = """
import sqlite3, sys, time, duckdb
from mir.storage import Migration, migrate, retrying_while_locked
kind, path = sys.argv[1], sys.argv[2]
def slow(con):
    time.sleep(0.3)  # the other process arrives while this step is open
    con.execute("INSERT INTO hits VALUES (1)")
steps = (Migration("0001_hits", "CREATE TABLE hits (x INTEGER)"), Migration("0002_slow", slow),
         Migration("0003_more", "INSERT INTO hits VALUES (2)"))
if kind == "duckdb":
    con = retrying_while_locked(lambda: duckdb.connect(path), 30)
else:
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
print(",".join(migrate(con, "race", steps)))
con.close()
"""


@pytest.mark.parametrize("kind", BACKENDS)
def test_two_processes_migrating_at_once_apply_each_step_once(tmp_path, kind):
    path = tmp_path / f"race.{kind}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACE, kind, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    applied = [name for out, _ in outputs for name in out.strip().split(",") if name]
    assert sorted(applied) == ["0001_hits", "0002_slow", "0003_more"]  # each once, in all
    con = opener(kind, path)()
    assert sorted(r[0] for r in con.execute("SELECT x FROM hits").fetchall()) == [1, 2]
    assert recorded(con, "race") == ["0001_hits", "0002_slow", "0003_more"]


def test_an_older_record_without_a_time_still_counts_as_applied(db):
    _, connect = db
    con = connect()
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at VARCHAR)")
    con.execute(STEPS[0].apply)
    con.execute("INSERT INTO _migrations VALUES ('0001_a', NULL)")
    assert migrate(con, "thing", STEPS) == ["0002_b", "0003_a_z"]  # 0001 not run again
    at = con.execute("SELECT applied_at FROM _mir_migrations WHERE name = '0001_a'").fetchone()
    assert at[0] and at[0] != "None"
