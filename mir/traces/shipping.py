"""Moving a store's events out: a host's compacted segments into the fleet's trace lake
(``lake.py``) and what the lake holds against what this host shipped; every event of a
view into one Parquet file (``mir traces export --format parquet``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.traces.database import STORED_COLUMNS, quoted
from mir.traces.domain import TraceStoreError
from mir.traces.lake import Lake, _sql
from mir.traces.records import EVENT_FIELDS
from mir.traces.sources import FlowFilter, filtered_events

if TYPE_CHECKING:
    import duckdb

    from mir.traces.views import Views


def ship_quietly(lake: Lake, db_path: Path, warnings: list[str]) -> tuple[int, int]:
    """``ship``, a lake that cannot be reached costing a warning (once) rather than the
    compaction that calls it: the segments wait in the host's database for the next."""
    try:
        return ship(lake, db_path)
    except TraceStoreError as exc:
        warning = f"traces not shipped to the fleet's lake: {exc}"
        if warning not in warnings:
            warnings.append(warning)
        return 0, 0


def ship(lake: Lake, db_path: Path) -> tuple[int, int]:
    """Ship every segment of this host's database (``db_path``) that the lake lacks, in
    one DuckLake transaction: its rows, its shadowed lines and its record together. The
    caller holds the folder's exclusive lock (one shipper per host; hosts never ship
    each other's segments). Returns (segments, rows) shipped."""
    import duckdb

    # A connection of its own: the database attached read-only, the lake read-write (a
    # read-only connection would make every attached database read-only).
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{_sql(db_path)}' AS traces (READ_ONLY)")
        con.execute("USE traces")
        lake.attach(con, write=True)
        return _ship(con)
    except duckdb.Error as exc:
        raise lake.error(exc) from exc
    finally:
        con.close()


def _ship(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    names = [
        row[0]
        for row in con.execute(
            "SELECT name FROM segments WHERE name NOT IN (SELECT name FROM lake.segments) "
            "ORDER BY name"
        ).fetchall()
    ]
    if not names:
        return 0, 0
    columns = quoted(STORED_COLUMNS)
    params = {"names": names}
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            f"INSERT INTO lake.events SELECT {columns} FROM events "
            "WHERE list_contains($names, segment) ORDER BY segment, n",
            params,
        )
        con.execute(
            "INSERT INTO lake.shadowed SELECT segment, n FROM shadowed "
            "WHERE list_contains($names, segment)",
            params,
        )
        con.execute(
            "INSERT INTO lake.segments SELECT name, lines, head, now() FROM segments "
            "WHERE list_contains($names, name)",
            params,
        )
        row = con.execute(
            "SELECT count(*) FROM events WHERE list_contains($names, segment)", params
        ).fetchone()
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(names), int(row[0]) if row else 0


def lake_counts(con: duckdb.DuckDBPyConnection, has_db: bool) -> dict[str, int]:
    """What the lake holds, and this host's compacted segments it does not yet."""
    row = con.execute(
        "SELECT count(DISTINCT name), coalesce(sum(lines), 0) FROM lake.segments"
    ).fetchone()
    waiting = (
        con.execute(
            "SELECT count(*) FROM segments WHERE name NOT IN (SELECT name FROM lake.segments)"
        ).fetchone()
        if has_db
        else (0,)
    )
    return {
        "segments": int(row[0]) if row else 0,
        "lines": int(row[1]) if row else 0,
        "not shipped from this host": int(waiting[0]) if waiting else 0,
    }


def lake_status(views: Views) -> dict[str, Any] | None:
    """In fleet mode with a trace lake: its data path, what it holds, and this host's
    compacted segments not shipped yet (live segments ship once compacted); None
    without a lake."""
    if views.lake is None:
        return None
    with views.reading() as (con, has_db, _, lake):
        counts = lake_counts(con, has_db) if lake else {"segments": 0, "lines": 0}
    return {"data_path": views.lake.data_path, **counts}


def parquet_export(views: Views, output: Path, flows: FlowFilter | None) -> int:
    """Every event (of the ``flows`` kept) into a Parquet file; returns the count."""
    with views.reading() as (con, has_db, files, lake):
        source, params = filtered_events(has_db, files, flows, lake=lake)
        columns = quoted(list(EVENT_FIELDS))
        target = str(output).replace("'", "''")
        con.execute(
            f'COPY (SELECT {columns} FROM ({source}) ORDER BY "at", flow_id, seq) '
            f"TO '{target}' (FORMAT parquet)",
            params,
        )
        row = con.execute(f"SELECT count(*) FROM ({source})", params).fetchone()
    return int(row[0]) if row else 0
