"""Drift's parsed rows: every stored ``final`` event's JSON parsed once, into ``drift_rows``.

Parsing each final event's record was most of a drift run (0.4 s for the 270k flows of
a week and a day in a 1M-decision store; reading the payloads alone is 60 ms). The
database's events never change: the store is append-only (compaction inserts whole
segments in one transaction; nothing updates or deletes a row). So each final event is
parsed once, by the first drift run that holds the store's write lock, into
``drift_rows`` (step ``0006_create_drift_rows``, ``tables.py``), keyed by the event's (segment, n).
``drift_ingested`` records, per segment, the (last position + 1, row count) it had when
parsed: a segment whose figures differ now is parsed again whole, so rows reaching a
segment in any order are never missed and never doubled.

Reads use the parsed rows only while they cover every stored event (the counts agree);
otherwise (a read-only store, a compaction since the last writing run) they parse the
events as before. Live segment lines (not yet compacted) are always parsed at read
time. Shadowed rows (a repeated event_id) are dropped at read time, as for events.

The rows are derived data: deleting both tables (or the whole database's drift tables)
loses nothing; reads then parse the events. Damage is never fatal: tables whose columns
are not the migration's (dropped, retyped, added, a view in their place) are not read,
and the next writing run drops and rebuilds them; a kept row a query cannot parse (its
decision text not JSON) makes the run parse the events instead, and a writing run
rebuilds every row (``rebuild``). ``mir traces verify`` checks the events, not these
rows: an edit by hand that leaves them well-formed (another agent, another valid JSON
decision) is not detected.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mir.drift import tables
from mir.traces import TraceStoreError

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

# What a final event holds beyond its columns: the record's wall time and tokens, and
# (beside the record, since finals carry them) the flow's source, contract and prompts.
_FINAL = json.dumps(
    {
        "source": "VARCHAR",
        "contract_hash": "VARCHAR",
        "prompt_hashes": ["VARCHAR"],
        # the decision as JSON text, from the same parse (a second parse of the event
        # with json_extract cost 0.46 s per 1M finals)
        "record": {"latency_ms": "DOUBLE", "tokens": "DOUBLE", "decision": "JSON"},
    }
)
# The columns of a parsed row, in ``drift_rows`` order after (segment, n).
COLUMNS = (
    'agent, flow_id, "at", status, reasons, provider, model, cost_usd, src, contract_hash, '
    "prompt_hashes, latency_ms, tokens, decision"
)


def parsed(finals: str) -> str:
    """The parsed rows of the final events selected by the SQL ``finals`` (rows with
    the store's columns); ``decision`` is the record's decision as JSON text."""
    return (
        'SELECT segment, n, agent, flow_id, "at", status, reasons, provider, model, '
        "cost_usd, j.source AS src, j.contract_hash AS contract_hash, "
        "j.prompt_hashes AS prompt_hashes, "
        "j.record.latency_ms AS latency_ms, j.record.tokens AS tokens, "
        "j.record.decision::VARCHAR AS decision "
        f"FROM (SELECT *, json_transform(data, '{_FINAL}') AS j FROM ({finals}))"
    )


# The tables as migration ``0006_create_drift_rows`` creates them: what a rebuild
# creates again (the step's own statements, so the two cannot differ).
TABLES = tables.step("0006_create_drift_rows").statements
# Their columns as DuckDB's catalog names them, in order.
SHAPE = {
    "drift_rows": (
        ("segment", "VARCHAR"),
        ("n", "BIGINT"),
        ("agent", "VARCHAR"),
        ("flow_id", "VARCHAR"),
        ("at", "TIMESTAMP WITH TIME ZONE"),
        ("status", "VARCHAR"),
        ("reasons", "VARCHAR[]"),
        ("provider", "VARCHAR"),
        ("model", "VARCHAR"),
        ("cost_usd", "DOUBLE"),
        ("src", "VARCHAR"),
        ("contract_hash", "VARCHAR"),
        ("prompt_hashes", "VARCHAR[]"),
        ("latency_ms", "DOUBLE"),
        ("tokens", "DOUBLE"),
        ("decision", "VARCHAR"),
    ),
    "drift_ingested": (("ingested_segment", "VARCHAR"), ("upto", "BIGINT"), ("events", "BIGINT")),
}


def _state(con: duckdb.DuckDBPyConnection) -> str:
    """'sound' (both tables, the migration's columns), 'absent' (one or both dropped,
    or no events table) or 'damaged' (present, or a view in their place, but not the
    migration's columns)."""
    names = {
        row[0]
        for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND schema_name = "
            "current_schema() AND table_name IN ('drift_rows', 'drift_ingested', 'events')"
        ).fetchall()
    }
    views = {
        row[0]
        for row in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT temporary AND schema_name = "
            "current_schema() AND view_name IN ('drift_rows', 'drift_ingested')"
        ).fetchall()
    }
    if views:
        return "damaged" if "events" in names else "absent"
    if names != {"drift_rows", "drift_ingested", "events"}:
        return "absent"
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name IN ('drift_rows', 'drift_ingested') "
        "ORDER BY table_name, column_index"
    ).fetchall():
        columns.setdefault(table, []).append((column, kind))
    sound = all(tuple(columns.get(table, ())) == shape for table, shape in SHAPE.items())
    return "sound" if sound else "damaged"


def complete(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the parsed rows can be read and cover every event in the database
    (append-only: equal counts mean the same rows)."""
    return _state(con) == "sound" and _covered(con)


def rebuild(con: duckdb.DuckDBPyConnection) -> int:
    """Drop the parsed rows (damaged: a row a query could not parse, columns that are
    not the migration's) and parse every final event again, in one transaction; ``con``
    must be writable. Returns the segments parsed."""
    con.execute("BEGIN TRANSACTION")
    try:
        _recreate(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return ingest(con)


def _recreate(con: duckdb.DuckDBPyConnection) -> None:
    for name in ("drift_rows", "drift_ingested"):
        kind = con.execute(
            "SELECT 'VIEW' FROM duckdb_views() WHERE NOT temporary AND schema_name = "
            "current_schema() AND view_name = $name",
            {"name": name},
        ).fetchone()
        con.execute(f"DROP {kind[0] if kind else 'TABLE'} IF EXISTS {name}")
    for sql in TABLES:
        con.execute(sql)


def _covered(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT (SELECT count(*) FROM events) = (SELECT coalesce(sum(events), 0) "
        "FROM drift_ingested) AND (SELECT count(*) FROM events WHERE step = 'final') = "
        "(SELECT count(*) FROM drift_rows)"
    ).fetchone()
    return bool(row and row[0])


def ingest(con: duckdb.DuckDBPyConnection) -> int:
    """Parse the final events of every segment not parsed as it stands now, in one
    transaction (a kill leaves the rows as they were); returns the segments parsed.
    ``con`` must be writable and migrated; tables dropped by hand stay dropped (reads
    then parse every time), tables whose columns are damaged are rebuilt."""
    state = _state(con)
    if state == "damaged":
        return rebuild(con)
    if state == "absent" or _covered(con):
        return 0
    con.execute("BEGIN TRANSACTION")
    try:
        # a segment that grew, or whose kept rows are not one per final event (rows
        # deleted or added by hand): parsed again whole
        con.execute(
            "CREATE OR REPLACE TEMP TABLE drift_stale AS "
            "SELECT s.segment, s.upto, s.events FROM (SELECT segment, max(n) + 1 AS upto, "
            "count(*) AS events, count(*) FILTER (WHERE step = 'final') AS finals "
            "FROM events GROUP BY segment) s "
            "LEFT JOIN drift_ingested i ON i.ingested_segment = s.segment "
            "LEFT JOIN (SELECT segment, count(*) AS kept FROM drift_rows GROUP BY segment) k "
            "ON k.segment = s.segment "
            "WHERE i.upto IS DISTINCT FROM s.upto OR i.events IS DISTINCT FROM s.events "
            "OR coalesce(k.kept, 0) <> s.finals"
        )
        # kept rows of segments no longer stored at all (added by hand): gone
        con.execute(
            "DELETE FROM drift_rows WHERE segment NOT IN (SELECT DISTINCT segment FROM events)"
        )
        con.execute("DELETE FROM drift_rows WHERE segment IN (SELECT segment FROM drift_stale)")
        finals = "SELECT * FROM events SEMI JOIN drift_stale USING (segment) WHERE step = 'final'"
        _insert_parsed(con, "drift_rows", finals, {})
        con.execute(
            "DELETE FROM drift_ingested WHERE ingested_segment IN (SELECT segment FROM drift_stale)"
        )
        con.execute("INSERT INTO drift_ingested SELECT segment, upto, events FROM drift_stale")
        row = con.execute("SELECT count(*) FROM drift_stale").fetchone()
        con.execute("DROP TABLE drift_stale")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return int(row[0]) if row else 0


def ingest_lake(con: duckdb.DuckDBPyConnection, events: EventsSql) -> bool:
    """Parse the final events of the trace lake's segments from other hosts not parsed
    yet into ``drift_lake_rows``, in one transaction; ``con`` writable and migrated.
    A shipped segment never changes, so one whose unique event count is what was parsed
    is done; one that differs (rows edited in the lake) is parsed again whole, and rows
    of segments no longer in the lake are dropped. Returns whether the kept rows now
    cover the lake (False with no lake, or tables dropped by hand)."""
    if not getattr(events, "lake", False) or not _has_lake_tables(con):
        return False
    theirs = events("true", stored=False, live=False)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE drift_lake_now AS "
            f"SELECT segment, count(*) AS events FROM ({theirs}) GROUP BY segment"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE drift_lake_stale AS SELECT n.segment, n.events "
            "FROM drift_lake_now n LEFT JOIN drift_lake_ingested i "
            "ON i.ingested_segment = n.segment WHERE i.events IS DISTINCT FROM n.events"
        )
        con.execute(
            "DELETE FROM drift_lake_rows WHERE segment NOT IN (SELECT segment FROM "
            "drift_lake_now) OR segment IN (SELECT segment FROM drift_lake_stale)"
        )
        con.execute(
            "DELETE FROM drift_lake_ingested WHERE ingested_segment NOT IN (SELECT segment "
            "FROM drift_lake_now) OR ingested_segment IN (SELECT segment FROM drift_lake_stale)"
        )
        stale = [row[0] for row in con.execute("SELECT segment FROM drift_lake_stale").fetchall()]
        if stale:
            finals = events(
                "step = 'final' AND list_contains($stale, segment)", stored=False, live=False
            )
            _insert_parsed(con, "drift_lake_rows", finals, {"stale": stale})
            con.execute("INSERT INTO drift_lake_ingested SELECT * FROM drift_lake_stale")
        con.execute("DROP TABLE drift_lake_now")
        con.execute("DROP TABLE drift_lake_stale")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def _insert_parsed(
    con: duckdb.DuckDBPyConnection, table: str, finals: str, params: dict[str, object]
) -> None:
    """The parsed rows of ``finals`` into ``table``; an event whose data is not JSON is
    a damaged store (one line), not drift's."""
    import duckdb

    try:
        con.execute(f"INSERT INTO {table} {parsed(finals)}", params)
    except (duckdb.InvalidInputException, duckdb.ConversionException) as exc:
        raise damaged_events(exc) from exc


def _has_lake_tables(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE NOT temporary AND database_name = "
        "current_database() AND schema_name = current_schema() "
        "AND table_name IN ('drift_lake_rows', 'drift_lake_ingested')"
    ).fetchone()
    return bool(row and row[0] == 2)


def source(events: EventsSql, where: str, *, kept: bool, lake_kept: bool = False) -> str:
    """SQL of the parsed rows of every unique final event matching ``where`` (over the
    columns ``agent`` and ``at``): with ``kept`` (``complete`` said so in this same
    view), the kept rows plus the rest parsed now (live segments, and the lake's rows
    unless ``lake_kept``: ``ingest_lake`` parsed them in this same view); otherwise
    every final event parsed now."""
    finals = f"{where} AND step = 'final'"
    if not kept:
        return parsed(events(finals))
    stored = (
        f"SELECT segment, n, {COLUMNS} FROM drift_rows "
        f"ANTI JOIN shadowed USING (segment, n) WHERE {where}"
    )
    if not lake_kept:
        return f"{stored} UNION ALL {parsed(events(finals, stored=False))}"
    theirs = f"SELECT segment, n, {COLUMNS} FROM drift_lake_rows WHERE {where}"
    rest = parsed(events(finals, stored=False, lake=False))
    return f"{stored} UNION ALL {theirs} UNION ALL {rest}"


def damaged_events(exc: Exception) -> TraceStoreError:
    """A stored event itself cannot be parsed (its data is not JSON): the store is
    damaged, not drift's derived rows; one line, as every damaged store gives."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TraceStoreError(
        f"a stored event cannot be parsed ({first[:160]})",
        hint="`mir traces verify` names the damaged segment; restore it from a backup",
    )
