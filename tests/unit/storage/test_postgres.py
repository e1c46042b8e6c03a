"""The fleet store on a real Postgres: migrations, liveness across processes, the server
going away and coming back, and what a URL may print."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mir.errors import ConfigError
from mir.storage import (
    FleetStore,
    Migration,
    StoreSettings,
    StoreUnavailable,
    UnknownMigrationError,
    fleet_url,
    hide_password,
    recorded,
)
from mir.storage.postgres import _Qmark

pytestmark = pytest.mark.fleet

STEPS = (
    Migration("0001_items", "CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)"),
    Migration("0002_items_at", "ALTER TABLE items ADD COLUMN at TEXT"),
)


def test_steps_apply_once_and_are_recorded(pg_url: str) -> None:
    store = FleetStore(pg_url)
    try:
        assert store.migrate("demo", STEPS) == ["0001_items", "0002_items_at"]
        assert store.migrate("demo", STEPS) == []
        with store.connection() as con:
            assert recorded(_Qmark(con), "demo") == ["0001_items", "0002_items_at"]
            # in schema mir, not public
            schema = con.execute(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = 'items'"
            ).fetchone()
        assert schema == ("mir",)
    finally:
        store.close()


def test_a_step_a_newer_mir_recorded_is_refused(pg_url: str) -> None:
    store = FleetStore(pg_url)
    try:
        store.migrate("demo", STEPS)
        with pytest.raises(UnknownMigrationError, match="0002_items_at"):
            store.migrate("demo", STEPS[:1])
    finally:
        store.close()


def test_a_failing_step_leaves_nothing_recorded(pg_url: str) -> None:
    store = FleetStore(pg_url)
    bad = (Migration("0001_bad", ("CREATE TABLE half (id TEXT)", "SELECT * FROM nowhere")),)
    try:
        with pytest.raises(Exception, match="nowhere"):
            store.migrate("bad", bad)
        with store.connection() as con:
            assert recorded(_Qmark(con), "bad") == []
            # DDL rolled back with it
            assert con.execute("SELECT to_regclass('mir.half')").fetchone() == (None,)
    finally:
        store.close()


MIGRATE = """
import sys
from mir.storage import FleetStore, Migration
steps = tuple(Migration(f"{i:04d}_t{i}", f"CREATE TABLE t{i} (id TEXT)") for i in range(8))
print(",".join(FleetStore(sys.argv[1]).migrate("race", steps)))
"""


def test_processes_migrating_at_once_apply_each_step_once(pg_url: str) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", MIGRATE, pg_url], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    applied = [name for p in procs for name in p.communicate(timeout=60)[0].strip().split(",")]
    assert all(p.returncode == 0 for p in procs)
    applied = [name for name in applied if name]
    assert sorted(applied) == [f"{i:04d}_t{i}" for i in range(8)]


HOLDER = """
import sys, time
from mir.storage import FleetStore
store = FleetStore(sys.argv[1])
print(store.hold_liveness(), flush=True)
time.sleep(120)
"""


def test_a_killed_process_is_seen_dead_and_a_live_one_alive(pg_url: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, pg_url], stdout=subprocess.PIPE, text=True
    )
    store = FleetStore(pg_url)
    try:
        assert holder.stdout is not None
        owner = holder.stdout.readline().strip()
        assert store.is_alive(owner)
        assert not store.is_alive("someone-who-never-was")
        assert store.is_alive(store.owner)  # ourselves, lock held or not
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        deadline = time.monotonic() + 10  # the server notices the closed socket at once
        while store.is_alive(owner) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not store.is_alive(owner)
    finally:
        holder.kill()
        store.close()


def test_a_stopped_server_is_unavailable_then_works_again(pg_server_private) -> None:
    url = pg_server_private.url()
    store = FleetStore(url, connect_timeout=1.0)
    try:
        store.migrate("demo", STEPS)
        pg_server_private.stop()
        with pytest.raises(StoreUnavailable) as caught, store.transaction() as con:
            con.execute("INSERT INTO items (id, n) VALUES ('a', 1)")
        message = str(caught.value)
        assert "unreachable" in message and "\n" not in message
        pg_server_private.start()
        with store.transaction() as con:  # the pool reconnects: no restart of ours
            con.execute("INSERT INTO items (id, n) VALUES ('a', 1)")
        with store.connection() as con:
            assert con.execute("SELECT n FROM items").fetchall() == [(1,)]
    finally:
        store.close()


def test_a_statement_error_is_not_unavailable(pg_url: str) -> None:
    import psycopg

    store = FleetStore(pg_url)
    try:
        with pytest.raises(psycopg.errors.UndefinedTable), store.connection() as con:
            con.execute("SELECT * FROM no_such_table")
    finally:
        store.close()


def test_a_process_shares_one_store_per_url_and_a_child_its_own(pg_url: str) -> None:
    first = FleetStore.shared(pg_url)
    try:
        assert FleetStore.shared(pg_url) is first
        code = textwrap.dedent(
            """
            import os, sys
            from mir.storage import FleetStore
            a = FleetStore.shared(sys.argv[1])
            pid = os.fork()
            if pid == 0:
                os._exit(0 if FleetStore.shared(sys.argv[1]) is not a else 1)
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        )
        assert subprocess.run([sys.executable, "-c", code, pg_url], timeout=60).returncode == 0
    finally:
        first.close()


def test_passwords_never_print() -> None:
    assert (
        hide_password("postgresql://mir:s3cret@db:5432/mir") == "postgresql://mir:***@db:5432/mir"
    )
    assert "s3cret" not in hide_password("postgresql://db/mir?user=mir&password=s3cret")
    assert hide_password("postgresql://postgres@/db?host=/tmp/x") == (
        "postgresql://postgres@/db?host=/tmp/x"
    )


def test_the_environment_wins_and_a_bad_url_is_a_config_error(monkeypatch) -> None:
    monkeypatch.delenv("MIR_STORE_URL", raising=False)
    assert fleet_url(None) is None
    assert fleet_url(StoreSettings()) is None
    assert fleet_url(StoreSettings(url="postgresql://a/b")) == "postgresql://a/b"
    monkeypatch.setenv("MIR_STORE_URL", "postgresql://env/db")
    assert fleet_url(StoreSettings(url="postgresql://a/b")) == "postgresql://env/db"
    assert FleetStore.configured(None) is FleetStore.shared("postgresql://env/db")
    monkeypatch.delenv("MIR_STORE_URL")
    assert FleetStore.configured(StoreSettings()) is None
    monkeypatch.setenv("MIR_STORE_URL", "postgresql://env/db")
    monkeypatch.setenv("MIR_STORE_URL", "mysql://u:pw@h/db")
    with pytest.raises(ConfigError, match=r"MIR_STORE_URL is not a Postgres URL") as caught:
        fleet_url(None)
    assert "pw" not in str(caught.value)


def test_local_mode_never_imports_psycopg() -> None:
    code = "import sys, mir.storage, mir.cli.app; sys.exit('psycopg' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
