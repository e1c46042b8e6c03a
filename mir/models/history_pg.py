"""The registry's history on the fleet store: the DuckDB history's ``model_changes``
(``mir.models.history``) in the Postgres every host of a project shares, so a
promotion, a rollback or a refused gate on one host is in ``mir models history`` on
every other.

- Same rows in, same rows out: a change is written and read back by the DuckDB
  history's own functions (``change_values``, ``change_of``); an identity column,
  ``seq``, keeps insertion order where DuckDB has ``rowid``.
- An edit of ``models.toml`` holds one transaction from reading the latest stages to
  its commit after the file is replaced (``writing``), as with DuckDB; a
  transaction-scoped advisory lock makes two hosts' edits take turns on the history.
- The server unreachable is ``StoreUnavailable`` (one line, exit 2): ``models.toml``
  is then not changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from mir.errors import ConfigError
from mir.models.history import _COLUMNS, ModelChange, change_of, change_values
from mir.storage import FleetStore, Migration, ScopedStore, one_line_errors

# Frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_model_changes",
        "CREATE TABLE IF NOT EXISTS model_changes (seq BIGINT GENERATED ALWAYS AS IDENTITY "
        "PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, from_stage TEXT, "
        'to_stage TEXT NOT NULL, share DOUBLE PRECISION, "by" TEXT NOT NULL, '
        '"at" TIMESTAMPTZ NOT NULL, why TEXT, forced BOOLEAN NOT NULL, gate TEXT)',
    ),
    Migration(
        "0002_index_model_changes_by_name",
        "CREATE INDEX IF NOT EXISTS model_changes_by_name ON model_changes (name, seq)",
    ),
)
_INSERT = f"INSERT INTO model_changes ({_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})"
_LATEST = (
    "SELECT DISTINCT ON (name, version) name, version, to_stage FROM model_changes "
    "WHERE to_stage <> 'refused' ORDER BY name, version, seq DESC"
)


class PostgresModelHistory:
    """``ModelChangeLog`` on ``store`` (see the module docstring)."""

    def __init__(self, store: FleetStore):
        self.url = store.url
        self.where = store.display_url
        self._handle = ScopedStore(store, "models", MIGRATIONS)

    def _store(self) -> FleetStore:
        return self._handle.get()

    def record(self, changes: list[ModelChange]) -> None:
        """Changes that edit no file (a refused promotion), in one transaction."""
        with _explained(self.where), self._store().transaction() as con, con.cursor() as cur:
            cur.executemany(_INSERT, [change_values(change) for change in changes])

    def copy_from(self, local: list[ModelChange], *, dry_run: bool) -> tuple[int, int]:
        """``mir store migrate``: a host's local changes the fleet lacks (the same name,
        version, stage, author and time), oldest first, in one transaction; returns
        (copied, already there). ``dry_run``: count, write nothing."""
        if not local:
            return 0, 0
        store = FleetStore.shared(self.url) if dry_run else self._store()  # dry: no tables
        with _explained(self.where), store.connection() as con:
            table = con.execute("SELECT to_regclass('model_changes')").fetchone()[0]
            found = f"SELECT {_COLUMNS} FROM model_changes" if table else None
            rows = con.execute(found).fetchall() if found else []
            there = {_key(change_of(row)) for row in rows}
            new = [change for change in local if _key(change) not in there]
            if new and not dry_run:
                with con.transaction(), con.cursor() as cur:
                    cur.executemany(_INSERT, [change_values(change) for change in new])
        return len(new), len(local) - len(new)

    def changes(self, name: str | None = None) -> list[ModelChange]:
        """Every recorded change (of one name), oldest first."""
        where, params = ("WHERE name = %s", (name,)) if name else ("", ())
        with _explained(self.where), self._store().connection() as con:
            rows = con.execute(
                f'SELECT {_COLUMNS} FROM model_changes {where} ORDER BY "at", seq', params
            ).fetchall()
        return [change_of(row) for row in rows]

    @contextlib.contextmanager
    def writing(self) -> Iterator[PostgresWriter]:
        """The history opened for one edit of ``models.toml`` (``mir.models.editing``)."""
        with _explained(self.where), self._store().connection() as con:
            writer = PostgresWriter(con, self.where)
            try:
                yield writer
            finally:
                if writer.open:
                    with contextlib.suppress(Exception):  # the connection may be gone
                        con.execute("ROLLBACK")


class PostgresWriter:
    """One edit's transaction on the fleet store (``mir.models.history.LocalWriter``'s
    methods). ``errors`` leaves out ``OperationalError``: a server that went away is
    ``StoreUnavailable`` (``FleetStore`` says so), not a broken history."""

    def __init__(self, con: Any, where: str):
        import psycopg

        self.con, self.where, self.open = con, where, False
        self.errors: tuple[type[BaseException], ...] = (
            psycopg.InterfaceError,
            psycopg.DataError,
            psycopg.IntegrityError,
            psycopg.InternalError,
            psycopg.ProgrammingError,
            psycopg.NotSupportedError,
        )

    def begin(self) -> None:
        self.con.execute("BEGIN")
        self.open = True
        self.con.execute("SELECT pg_advisory_xact_lock(hashtext('mir-model-changes'))")

    def latest_stages(self) -> dict[tuple[str, str], str]:
        """Each version's latest recorded stage (a refused promotion moved nothing)."""
        rows = self.con.execute(_LATEST).fetchall()
        return {(name, version): stage for name, version, stage in rows}

    def insert(self, changes: list[ModelChange]) -> None:
        with self.con.cursor() as cur:
            cur.executemany(_INSERT, [change_values(change) for change in changes])

    def commit(self) -> None:
        self.open = False
        self.con.execute("COMMIT")

    def rollback(self) -> None:
        self.open = False
        self.con.execute("ROLLBACK")


def _explained(where: str) -> contextlib.AbstractContextManager[None]:
    """A broken history table as one ``ConfigError`` line: ``models.toml`` is unchanged."""
    return one_line_errors(
        lambda first: ConfigError(
            f"not a usable model history ({first})",
            where=where,
            hint="check the fleet store's mir.model_changes table; models.toml was not changed",
        )
    )


def _key(change: ModelChange) -> tuple[object, ...]:
    return (change.name, change.version, change.to_stage, change.by, change.at)
