"""The one migration runner: ordered, named steps recorded in ``_mir_migrations``.

Every database of mir (the trace store, drift's tables in it, the execution ledger, the
eval and model histories, the response cache, the review-alert log) says which schema
it has in one table, ``_mir_migrations (scope, name, applied_at)``, after simonw/llm's
``_llm_migrations``. A *scope* is one capability's set of steps, so two capabilities
may keep tables in one file (traces and drift do) without knowing each other's.

- Steps run in the order given, each in its own transaction together with its record:
  a step that fails leaves nothing recorded (and, where the database rolls DDL back,
  nothing applied), and the next run retries it.
- Re-running is a no-op; a database with nothing pending is only read (no write lock
  taken, no table created), so a read-only file can be checked with ``pending``.
- Two processes (or connections) migrating at once: each step is re-checked inside its
  transaction, and the loser of a race on a record sees the winner's and moves on.
- A recorded step this code does not know (a newer mir wrote the file) is refused with
  ``UnknownMigrationError``, one line naming the step, rather than guessed at.
- Files written before this table existed recorded their steps by name in
  ``_migrations (name, applied_at)``, one runner per file: such a step counts as
  applied, and is recorded here the next time the file is migrated.

Works on DuckDB and sqlite3 connections (``?`` parameters, ``TEXT`` columns) and on
Postgres through ``mir.storage.postgres`` (a psycopg connection wrapped to take ``?``;
each step's transaction there also takes a transaction-scoped advisory lock, so two
hosts migrating one database apply each step once, one after the other).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mir.errors import MirUserError

TABLE = "_mir_migrations"
LEGACY_TABLE = "_migrations"  # what each database's own runner recorded before


@dataclass(frozen=True)
class Migration:
    """One schema step. ``name`` is stable (never renamed: it is what a database
    records); ``apply`` is frozen SQL (one statement, or several run in order) or a
    function given the connection, never derived from code that may change later."""

    name: str
    apply: str | tuple[str, ...] | Callable[[Any], None]

    @property
    def statements(self) -> tuple[str, ...]:
        """The step's SQL statements (none for a function step)."""
        if isinstance(self.apply, str):
            return (self.apply,)
        return self.apply if isinstance(self.apply, tuple) else ()


class UnknownMigrationError(MirUserError):
    """The database records a step this mir does not know: a newer mir wrote it."""


@dataclass(frozen=True)
class _Dialect:
    begin: str
    table_exists: str  # one ``?``: the table's name
    lock: str | None = None  # run right after ``begin``: serialises migrating processes

    @staticmethod
    def of(con: Any) -> _Dialect:
        if getattr(con, "dialect", None) == "postgres":
            return _Dialect(
                "BEGIN",
                "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                "AND table_schema = current_schema()",
                "SELECT pg_advisory_xact_lock(hashtext('mir-migrations'))",
            )
        if isinstance(con, sqlite3.Connection):
            return _Dialect(
                "BEGIN IMMEDIATE",
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
            )
        return _Dialect(
            "BEGIN TRANSACTION",
            # DuckDB's own catalog function: half the cost of information_schema
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND NOT temporary "
            "AND database_name = current_database() AND schema_name = current_schema()",
        )


def _exists(con: Any, dialect: _Dialect, table: str) -> bool:
    row = con.execute(dialect.table_exists, [table]).fetchone()
    return bool(row and row[0])


def recorded(con: Any, scope: str) -> list[str]:
    """The steps of ``scope`` recorded in ``_mir_migrations``, in the order applied."""
    if not _exists(con, _Dialect.of(con), TABLE):
        return []
    rows = con.execute(
        f"SELECT name FROM {TABLE} WHERE scope = ? ORDER BY applied_at, name", [scope]
    ).fetchall()
    return [row[0] for row in rows]


def _legacy(con: Any, dialect: _Dialect, names: Sequence[str]) -> dict[str, str]:
    """Steps among ``names`` an older runner recorded in ``_migrations``: name -> when."""
    if not names or not _exists(con, dialect, LEGACY_TABLE):
        return {}
    rows = con.execute(f"SELECT name, CAST(applied_at AS TEXT) FROM {LEGACY_TABLE}").fetchall()
    wanted = set(names)
    # a record without a time keeps its place as applied; it is given this run's time
    return {name: "" if at is None else str(at) for name, at in rows if name in wanted}


def _check_known(
    scope: str, done: Sequence[str], steps: Sequence[Migration], where: str | None
) -> None:
    known = {step.name for step in steps}
    unknown = [name for name in done if name not in known]
    if unknown:
        raise UnknownMigrationError(
            f"the database records {scope} schema step {unknown[0]!r}, which this mir does "
            "not know (a newer mir wrote it)",
            where=where,
            hint="upgrade mir, or move the file aside to start a new one",
        )


def pending(
    con: Any, scope: str, steps: Sequence[Migration], *, where: str | None = None
) -> list[str]:
    """The names of the steps not applied yet, in order; only reads (a read-only
    connection will do). Raises ``UnknownMigrationError`` as ``migrate`` does."""
    done = recorded(con, scope)
    _check_known(scope, done, steps, where)
    missing = [step.name for step in steps if step.name not in set(done)]
    legacy = _legacy(con, _Dialect.of(con), missing)
    return [name for name in missing if name not in legacy]


def migrate(
    con: Any, scope: str, steps: Sequence[Migration], *, where: str | None = None
) -> list[str]:
    """Apply, in order, the steps of ``scope`` not yet recorded (one transaction per
    step, with its record); returns the names applied by this call. Call it outside a
    transaction. ``where``: the file, named by ``UnknownMigrationError``."""
    names = [step.name for step in steps]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate migration names in scope {scope!r}")
    done = recorded(con, scope)
    _check_known(scope, done, steps, where)
    todo = [step for step in steps if step.name not in set(done)]
    if not todo:
        return []
    dialect = _Dialect.of(con)
    if not _exists(con, dialect, TABLE):
        _create_table(con, dialect)
    legacy = _legacy(con, dialect, [step.name for step in todo])
    applied = []
    for step in todo:
        if _apply(con, dialect, scope, step, legacy.get(step.name)):
            applied.append(step.name)
    return applied


def _create_table(con: Any, dialect: _Dialect) -> None:
    try:
        _begin(con, dialect)
        con.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (scope TEXT NOT NULL, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL, PRIMARY KEY (scope, name))"
        )
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        if not _exists(con, dialect, TABLE):  # not a race another process won
            raise


def _is_recorded(con: Any, scope: str, name: str) -> bool:
    row = con.execute(
        f"SELECT count(*) FROM {TABLE} WHERE scope = ? AND name = ?", [scope, name]
    ).fetchone()
    return bool(row and row[0])


def _apply(con: Any, dialect: _Dialect, scope: str, step: Migration, legacy_at: str | None) -> bool:
    """One step and its record in one transaction; False when it was already recorded
    (by an older runner, or by another process that got there first)."""
    try:
        _begin(con, dialect)
        if _is_recorded(con, scope, step.name):
            con.execute("COMMIT")
            return False
        if legacy_at is None:
            if callable(step.apply):
                step.apply(con)
            else:
                for statement in step.statements:
                    con.execute(statement)
        at = legacy_at or datetime.now(UTC).isoformat()
        con.execute(f"INSERT INTO {TABLE} VALUES (?, ?, ?)", [scope, step.name, at])
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        if _is_recorded(con, scope, step.name):  # a concurrent migration applied it
            return False
        raise
    return legacy_at is None


def _begin(con: Any, dialect: _Dialect) -> None:
    con.execute(dialect.begin)
    if dialect.lock is not None:
        con.execute(dialect.lock)


def _rollback(con: Any) -> None:
    # nothing open to roll back when the error came with BEGIN itself (a busy file)
    with contextlib.suppress(Exception):
        con.execute("ROLLBACK")
