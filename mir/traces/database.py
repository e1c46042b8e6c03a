"""The DuckDB file: the trace store's schema steps, and SQL over the database plus live
segments.

Schema changes are named steps of ``mir.storage.migrate`` (scope ``traces``), applied in
order, each in its own transaction with its record, so upgrading is idempotent and a
database always says which schema it has. Only a compactor, or an ``analysis(write=True)``
(both holding the exclusive folder lock), migrates; readers open the file read-only.
Other capabilities keep their own tables in this file under their own scope (drift's:
``mir/drift/tables.py``); this module does not know them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mir.storage import Migration, is_lock_conflict, retrying_while_locked
from mir.storage import migrate as migrate_steps
from mir.storage import pending as pending_steps
from mir.traces.domain import TraceStoreError
from mir.traces.records import CHAIN_FIELDS, EVENT_FIELDS

if TYPE_CHECKING:
    import duckdb

# Frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_events",
        # One row per segment line, keyed by (segment, n): the physical record the hash
        # chain covers. Readers dedupe by event_id (a caller may append an event twice).
        "CREATE TABLE events (segment VARCHAR NOT NULL, n BIGINT NOT NULL, v INTEGER, "
        'hash VARCHAR, "event_id" VARCHAR, "flow_id" VARCHAR, "seq" BIGINT, '
        '"step" VARCHAR, "agent" VARCHAR, "at" TIMESTAMPTZ, "status" VARCHAR, '
        '"reasons" VARCHAR[], "provider" VARCHAR, "model" VARCHAR, "prompt_hash" VARCHAR, '
        '"prompt_version" VARCHAR, "prompt_tokens" BIGINT, "completion_tokens" BIGINT, '
        '"cost_usd" DOUBLE, "latency_ms" DOUBLE, "data" VARCHAR)',
    ),
    Migration(
        "0002_create_segments",
        # A segment is loaded in the same transaction that records it here: a compactor
        # killed before deleting the file re-runs as a no-op instead of double-counting.
        "CREATE TABLE segments (name VARCHAR PRIMARY KEY, lines BIGINT NOT NULL, "
        "head VARCHAR, compacted_at TIMESTAMPTZ NOT NULL)",
    ),
    Migration(
        "0003_create_shadowed",
        # Lines repeating an event_id already stored, noted once at compaction, so a
        # read excludes them with an anti-join on a (nearly always empty) table instead
        # of deduplicating every row on every query (0.85 s per read at 1M events).
        (
            "CREATE TABLE shadowed (segment VARCHAR NOT NULL, n BIGINT NOT NULL)",
            "INSERT INTO shadowed SELECT segment, n FROM events "
            "QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY segment, n) > 1",
        ),
    ),
    Migration(
        "0004_create_adopted",
        # Segments compacted before the manifest existed: their counts and heads were
        # recorded at compaction, but not what their writers' head records said.
        (
            "CREATE TABLE adopted (name VARCHAR PRIMARY KEY)",
            "INSERT INTO adopted SELECT name FROM segments",
        ),
    ),
)
STORED_COLUMNS = ("segment", "n", "v", "hash", *EVENT_FIELDS)


def quoted(names: Sequence[str]) -> str:
    """A column list; quoted because ``at`` is an SQL keyword."""
    return ", ".join(f'"{name}"' for name in names)


# mir processes never contend for the file (they take traces.lock first); this only
# waits out a foreign program that may be about to close it.
LOCK_RETRY_SECONDS = 2.0
# Upgrading older lines: a field a line does not carry loads as the model's default.
LINE_DEFAULTS = {
    "reasons": "[]::VARCHAR[]",
    "prompt_tokens": "0",
    "completion_tokens": "0",
    "cost_usd": "0.0",
    "latency_ms": "0.0",
    "data": "'{}'",
}
_RECOVER = "move it aside and run the command again; the segment files are kept"


def connect(path: Path | None, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the database file (or an in-memory one), turning DuckDB's errors into one
    clear line that names the file and the way out."""
    import duckdb

    if path is None:
        return _quiet(duckdb.connect(":memory:"))
    try:  # another program may be about to let go of the file
        con = retrying_while_locked(
            lambda: duckdb.connect(str(path), read_only=read_only), LOCK_RETRY_SECONDS
        )
    except duckdb.Error as exc:
        raise _explain(path, exc, locked=is_lock_conflict(exc)) from exc
    return _quiet(con)


def _quiet(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    # DuckDB draws a progress bar on stdout for long queries: never in mir's output.
    con.execute("SET enable_progress_bar = false")
    return con


def _explain(path: Path, exc: Exception, *, locked: bool) -> TraceStoreError:
    if locked:
        return TraceStoreError(
            "the trace database is held open by another program",
            where=str(path),
            hint="close the other program (e.g. a duckdb shell) and retry; new traces "
            "keep accumulating in segment files meanwhile",
        )
    first_line = str(exc).splitlines()[0]
    if _refused_by_permissions(first_line) and not os.access(path, os.R_OK):
        return TraceStoreError(
            "this user may not read the trace database",
            where=str(path),
            hint="run as its owner or fix its permissions (a permission, not damage)",
        )
    if _refused_by_permissions(first_line):
        # a healthy file this user may only read is not damaged: moving it aside would
        # throw the compacted history away
        return TraceStoreError(
            "the trace database is read-only for this user",
            where=str(path),
            hint="reading commands (`mir traces list|show|export|verify`) work; compacting "
            "writes to it: run as its owner or make it writable; it is not damaged",
        )
    return TraceStoreError(
        f"not a readable trace database ({first_line})", where=str(path), hint=_RECOVER
    )


_NOT_WRITABLE = ("permission denied", "read-only file system", "operation not permitted")


def _refused_by_permissions(error: str) -> bool:
    """The system refused the file (its mode, its owner, a read-only mount or an
    immutable flag): told apart from a torn or foreign file, which DuckDB opens and then
    fails to read."""
    return any(word in error.lower() for word in _NOT_WRITABLE)


def explain(path: Path, exc: Exception) -> TraceStoreError:
    """A DuckDB error met after opening (a truncated file fails on first read)."""
    return _explain(path, exc, locked=is_lock_conflict(exc))


def is_database_error(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.Error)


def is_unreadable_file(exc: BaseException) -> bool:
    """A DuckDB error met while reading that means the file itself cannot be read (torn,
    truncated, checksum mismatch, held by another program). A query's own error (a binder
    or invalid-input error from a bad JSON path, a conversion) says nothing about the file:
    telling the user to move a healthy store aside for it would be wrong advice."""
    import duckdb

    if isinstance(exc, duckdb.IOException | duckdb.SerializationException):
        return True
    return isinstance(exc, duckdb.Error) and "corrupt" in str(exc).lower()


def pending_migrations(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> list[str]:
    """The trace store's steps not applied yet (only reads: a read-only file will do)."""
    return pending_steps(con, "traces", MIGRATIONS, where=str(path) if path else None)


def migrate(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> list[str]:
    """Apply every trace store step not yet recorded, in order; returns the names applied."""
    return migrate_steps(con, "traces", MIGRATIONS, where=str(path) if path else None)


def _sql_list(files: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def raw_segment_lines(files: Sequence[Path]) -> str:
    """Every line of the files, torn or malformed ones as rows whose event_id is NULL.

    Columns are given explicitly: nothing is inferred, so an empty file or an old line
    format (a missing field loads as NULL) reads the same way.
    """
    columns = {**CHAIN_FIELDS, **EVENT_FIELDS}
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    names = ", ".join(
        f'coalesce("{c}", {LINE_DEFAULTS[c]}) AS "{c}"' if c in LINE_DEFAULTS else f'"{c}"'
        for c in STORED_COLUMNS
        if c != "segment"
    )
    return (
        f"SELECT parse_filename(filename) AS segment, {names} FROM read_json("
        f"{_sql_list(files)}, format='newline_delimited', columns={spec}, "
        "ignore_errors=true, filename=true)"
    )


def stored_lines(
    *, has_db: bool, files: Sequence[Path], where: str = "true", lake: bool = False
) -> str:
    """All stored lines (database, then segments not yet compacted; with ``lake``, the
    lake's lines of segments this database does not hold too), filtered by ``where``."""
    columns = quoted(STORED_COLUMNS)
    parts = []
    if has_db:
        parts.append(f"SELECT {columns} FROM events WHERE {where}")
    if lake:
        parts.append(f"SELECT {columns} FROM lake.events WHERE {_not_here(has_db)} AND ({where})")
    if files:
        not_loaded = "AND segment NOT IN (SELECT name FROM segments)" if has_db else ""
        parts.append(
            f"SELECT {columns} FROM ({raw_segment_lines(files)}) "
            f"WHERE event_id IS NOT NULL {not_loaded} AND ({where})"
        )
    if not parts:
        nulls = ", ".join(f'NULL::{_kind(c)} AS "{c}"' for c in STORED_COLUMNS)
        # Still mentions ``where`` so its named parameters stay bound.
        parts.append(f"SELECT * FROM (SELECT {nulls}) WHERE false AND ({where})")
    return " UNION ALL ".join(parts)


def unique_events(
    *,
    has_db: bool,
    files: Sequence[Path],
    where: str = "true",
    stored: bool = True,
    lake: bool = False,
) -> str:
    """Stored lines, one per event_id (the first stored copy wins), filtered by ``where``.

    Database rows are unique once ``shadowed`` ones are dropped; live segment rows are
    deduplicated among themselves and against the database (both small or indexed by
    the anti-join's hash table on the segment side). ``stored=False``: the live segment
    lines only (still deduplicated against the database), for a reader that has the
    database's rows from elsewhere (drift's parsed rows).

    ``lake`` (the fleet's DuckLake attached as ``lake``, see ``lake.py``): the lake's
    unique rows of segments this database does not hold (other hosts') are part of it,
    with ``stored=False`` too (they are not in this host's database).
    """
    columns = quoted(STORED_COLUMNS)
    parts = []
    if has_db and stored:
        parts.append(
            f"SELECT {columns} FROM events ANTI JOIN shadowed USING (segment, n) WHERE {where}"
        )
    if lake:
        parts.append(
            f"SELECT {columns} FROM lake.events ANTI JOIN lake.shadowed USING (segment, n) "
            f"WHERE {_not_here(has_db)} AND ({where})"
        )
    if files:
        live = (
            f"SELECT {columns} FROM ({raw_segment_lines(files)}) "
            f"WHERE event_id IS NOT NULL AND ({where})"
        )
        if has_db:
            live = (
                f"SELECT * FROM ({live}) WHERE segment NOT IN (SELECT name FROM segments) "
                f"AND event_id NOT IN (SELECT event_id FROM events WHERE {where})"
            )
        parts.append(
            f"SELECT * FROM ({live}) "
            "QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY segment, n) = 1"
        )
    if not parts:
        return stored_lines(has_db=False, files=(), where=where)
    return " UNION ALL ".join(parts)


def _not_here(has_db: bool) -> str:
    """The lake's segments this host's database does not hold (its own shipped ones it
    reads from its database)."""
    return "segment NOT IN (SELECT name FROM segments)" if has_db else "true"


def _kind(column: str) -> str:
    return {**CHAIN_FIELDS, **EVENT_FIELDS, "segment": "VARCHAR"}[column]
