"""Consistent views of the trace store, for reading and for another capability's SQL.

A reader takes the folder lock *shared* (no compaction can start until it is done),
opens the database read-only, and sees ``events UNION ALL read_json(live segments)``,
one row per ``event_id`` (see ``database.unique_events``). A database written by an
older mir is migrated first, through a compaction, when this user may write it; a
store this user may only read is read as it is once the store's own steps are applied.
A writer (``analysis(write=True)``) holds the lock exclusively and opens the database
read-write, migrated with the caller's own tables' steps (``tables=(scope, steps)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.storage import Migration, migrate
from mir.traces import database
from mir.traces.compaction import adopt
from mir.traces.domain import EventsSql, TraceStoreError
from mir.traces.lake import Lake
from mir.traces.manifest import Manifest
from mir.traces.segments import folder_lock, segment_files

if TYPE_CHECKING:
    import duckdb

Tables = tuple[str, Sequence[Migration]]


class _Events:
    """``EventsSql`` over one view: this host's database, its live segments, the lake."""

    def __init__(self, has_db: bool, files: list[Path], lake: bool) -> None:
        self.has_db, self.files, self.lake = has_db, files, lake

    def __call__(
        self, where: str = "true", *, stored: bool = True, lake: bool = True, live: bool = True
    ) -> str:
        return database.unique_events(
            has_db=self.has_db,
            files=self.files if live else [],
            where=where,
            stored=stored,
            lake=self.lake and lake,
        )


def events_sql(has_db: bool, files: list[Path], lake: bool = False) -> EventsSql:
    return _Events(has_db, files, lake)


class Views:
    """The views of one store folder. ``before_reading`` runs before a reader takes the
    lock (an automatic compaction); ``upgrade`` migrates an older database (a
    compaction, under the exclusive lock)."""

    def __init__(
        self,
        directory: Path,
        manifest: Manifest,
        *,
        lock_timeout: float,
        before_reading: Callable[[], None],
        upgrade: Callable[[], object],
        lake: Lake | None = None,
    ) -> None:
        self.directory = directory
        self.segments_dir = directory / "segments"
        self.db_path = directory / "traces.duckdb"
        self.lock_path = directory / "traces.lock"
        self.manifest = manifest
        self._lock_timeout = lock_timeout
        self._before_reading = before_reading
        self._upgrade = upgrade
        self.lake = lake

    def _stayed_locked(self) -> TraceStoreError:
        return TraceStoreError(
            f"the trace store stayed locked for {self._lock_timeout:.0f}s",
            where=str(self.lock_path),
            hint="a compaction is still running; retry in a moment",
        )

    @contextmanager
    def analysis(
        self, *, write: bool, tables: Tables | None
    ) -> Iterator[tuple[duckdb.DuckDBPyConnection, EventsSql, bool]]:
        """``TraceStore.analysis`` (see there)."""
        if not write or not self.writable():
            with self.reading() as (con, has_db, files, lake):
                yield con, events_sql(has_db, files, lake), False
            return
        if self.segments_dir.is_dir():
            self.manifest.adopt_if_new([p.name for p in segment_files(self.segments_dir)])
        with folder_lock(self.lock_path, exclusive=True, wait=self._lock_timeout) as locked:
            if not locked:
                raise self._stayed_locked()
            con = database.connect(self.db_path, read_only=False)
            try:
                applied = database.migrate(con, self.db_path)
                if "0004_create_adopted" in applied:
                    # as compaction does: a store written before manifests existed
                    upgraded = "0001_create_events" not in applied
                    adopt(con, self.manifest, self.segments_dir, upgraded=upgraded)
                if tables is not None:
                    migrate(con, tables[0], tables[1], where=str(self.db_path))
                lake = self.attach_lake(con)
                yield con, events_sql(True, segment_files(self.segments_dir), lake), True
            except Exception as exc:
                if database.is_unreadable_file(exc):
                    raise self.explain(exc) from exc
                raise
            finally:
                con.close()

    def writable(self) -> bool:
        if not self.directory.is_dir() or not os.access(self.directory, os.W_OK):
            return False
        # a healthy database file this user may only read (its mode, a read-only mount):
        # what drift writes here is derived, so a reader does without it
        return not self.db_path.exists() or os.access(self.db_path, os.W_OK)

    def query(
        self, template: str, params: dict[str, Any], *, where: str = "true", columns: bool = False
    ) -> list[Any]:
        with self.reading() as (con, has_db, files, lake):
            source = database.unique_events(has_db=has_db, files=files, where=where, lake=lake)
            cursor = con.execute(template.replace("{events}", source), params)
            rows = cursor.fetchall()
            if columns:
                names = [d[0] for d in cursor.description]
                return [dict(zip(names, row, strict=True)) for row in rows]
            return rows

    def explain(self, exc: Exception) -> TraceStoreError:
        """A file that cannot be read: the lake's (a Parquet file of ``data_path``), or
        this host's database."""
        if self.lake is not None and self.lake.owns(exc):
            return self.lake.error(exc)
        return database.explain(self.db_path, exc)

    def attach_lake(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Attach the fleet's lake to ``con`` when there is one; whether its tables are
        there to read (nothing shipped yet: none)."""
        return self.lake is not None and self.lake.attach(con)

    @contextmanager
    def reading(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, bool, list[Path], bool]]:
        """A consistent view: no compaction can start until the caller is done. Yields
        the connection, whether this host's database is there, its live segment files,
        and whether the fleet's lake is attached (as ``lake``)."""
        if not self.directory.is_dir():  # nothing written yet: answer, create nothing
            con = database.connect(None, read_only=True)
            try:
                yield con, False, [], self.attach_lake(con)
            finally:
                con.close()
            return
        if self.segments_dir.is_dir():
            if os.access(self.directory, os.W_OK):
                self.manifest.adopt_if_new([p.name for p in segment_files(self.segments_dir)])
            self._before_reading()
        for attempt in range(2):
            with folder_lock(self.lock_path, exclusive=False, wait=self._lock_timeout) as locked:
                if not locked:
                    raise self._stayed_locked()
                has_db = self.db_path.exists()
                con = database.connect(self.db_path if has_db else None, read_only=True)
                try:
                    # A database written by an older mir is migrated before it is read
                    # (when this user may write it; else it is read if it can be).
                    pending = has_db and database.pending_migrations(con, self.db_path)
                    if not pending:
                        lake = self.attach_lake(con)
                        yield con, has_db, segment_files(self.segments_dir), lake
                        return
                except Exception as exc:
                    # A damaged file may open fine and fail on its first read; a
                    # query's own error (a bad JSON path) is not a damaged file.
                    if database.is_unreadable_file(exc):
                        raise self.explain(exc) from exc
                    raise
                finally:
                    con.close()
            if attempt:
                raise TraceStoreError(
                    "the trace database has an older schema and could not be upgraded",
                    where=str(self.db_path),
                    hint="run `mir traces compact` when no other mir process is compacting",
                )
            self._upgrade()
