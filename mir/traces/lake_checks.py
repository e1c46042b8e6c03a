"""Verifying the fleet's trace lake (``lake.py``): every lake segment's rows against its
record and re-hashed, this host's shipped segments against its own copy, and the lake's
segments of one flow before approve or reject acts on it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mir.storage import write_atomic
from mir.traces.chains import check_rows
from mir.traces.domain import ChainBreak, IntegrityReport
from mir.traces.manifest import Manifest
from mir.traces.verification import check_segments

if TYPE_CHECKING:
    import duckdb


def check_flow_segments(
    con: duckdb.DuckDBPyConnection,
    manifest: Manifest,
    segments_dir: Path,
    *,
    has_db: bool,
    lake: bool,
    segments: list[str],
) -> list[ChainBreak]:
    """The segments holding a flow's lines: this host's against its manifest, the ones
    read from the lake against the lake's records and chains."""
    theirs = lake_segments(con, segments) if lake else []
    mine = [name for name in segments if name not in theirs]
    breaks = check_segments(manifest, segments_dir, con if has_db else None, mine)
    return [*breaks, *check_lake(con, theirs)]


def lake_segments(con: duckdb.DuckDBPyConnection, names: Sequence[str]) -> list[str]:
    """Those of ``names`` read from the lake (not in this host's database)."""
    if not names:
        return []
    local = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND table_name = 'segments'"
    ).fetchone()
    mine = "AND name NOT IN (SELECT name FROM segments)" if local and local[0] else ""
    rows = con.execute(
        f"SELECT DISTINCT name FROM lake.segments WHERE list_contains($names, name) {mine}",
        {"names": list(names)},
    ).fetchall()
    return sorted(row[0] for row in rows)


def check_lake(
    con: duckdb.DuckDBPyConnection,
    names: Sequence[str] | None = None,
    verified: Mapping[str, str] | None = None,
) -> list[ChainBreak]:
    """The lake's segments (``names``, else all): each one's rows as its record says
    (lines, head hash, shipped once), and every link of their chains re-hashed but for
    those ``verified`` before with the head they record now (segment -> head)."""
    only = "list_contains($names, name)" if names is not None else "true"
    rows_only = "list_contains($names, segment)" if names is not None else "true"
    params = {"names": list(names)} if names is not None else {}
    if names is not None and not names:
        return []
    rows = con.execute(
        "SELECT coalesce(s.name, e.segment), s.records, s.lines, s.head, e.rows, e.last, "
        f"e.head FROM (SELECT name, count(*) AS records, any_value(lines) AS lines, "
        f"any_value(head) AS head FROM lake.segments WHERE {only} GROUP BY name) s "
        "FULL JOIN (SELECT segment, count(*) AS rows, max(n) + 1 AS last, "
        f"arg_max(hash, n) AS head FROM lake.events WHERE {rows_only} "
        "GROUP BY segment) e ON e.segment = s.name ORDER BY 1",
        params,
    ).fetchall()
    breaks = []
    verified = verified or {}
    rehash = [row[0] for row in rows if row[3] is None or verified.get(row[0]) != row[3]]
    for name, records, lines, head, count, last, row_head in rows:
        if records is None:
            problem = "rows in the lake that no shipment recorded"
        elif records > 1:
            problem = "the lake records this segment more than once"
        elif count is None:
            problem = "the lake lost every row of this segment"
        elif (count, last, row_head) != (lines, lines, head):
            problem = "lines were removed or changed in the lake"
        else:
            continue
        breaks.append(ChainBreak(segment=name, line=0, event_id=None, problem=problem))
    everything = names is None and not verified
    breaks += check_rows(con, None if everything else rehash, table="lake.events")
    return breaks


def with_lake(
    report: IntegrityReport,
    con: duckdb.DuckDBPyConnection,
    has_db: bool,
    *,
    state: Path,
    full: bool,
) -> IntegrityReport:
    """``report`` (this host's store) with the lake checked too: every lake segment's
    rows against its record, its chain re-hashed unless this host verified it before with
    the same head (``state``, a file in the host's manifest folder; ``full``: all), and
    this host's shipped segments against what its own database holds."""
    before = {} if full else _verified(state)
    breaks = list(check_lake(con, verified=before))
    if has_db:
        for name, lines, head, theirs, their_head in con.execute(
            "SELECT s.name, s.lines, s.head, l.lines, l.head FROM segments s "
            "JOIN lake.segments l USING (name) "
            "WHERE (l.lines, l.head) IS DISTINCT FROM (s.lines, s.head) ORDER BY s.name"
        ).fetchall():
            problem = (
                f"the lake's copy differs from this host's ({theirs} lines, head "
                f"{(their_head or '')[:12]}; here {lines}, {(head or '')[:12]})"
            )
            breaks.append(ChainBreak(segment=name, line=0, event_id=None, problem=problem))
    heads = dict(
        con.execute("SELECT name, any_value(head) FROM lake.segments GROUP BY name").fetchall()
    )
    lines = con.execute("SELECT coalesce(sum(lines), 0) FROM lake.segments").fetchone()
    again = sum(1 for name, head in heads.items() if before.get(name) != head)
    notice = (
        f"the fleet's lake: {len(heads)} segment(s), {int(lines[0]) if lines else 0} line(s); "
        f"{again} segment(s) re-hashed"
        + ("" if full or again == len(heads) else " (the rest verified before; --full: all)")
    )
    if not breaks and not report.breaks:
        write_atomic(state, json.dumps(heads, sort_keys=True))
    return report.model_copy(
        update={"breaks": (*report.breaks, *breaks), "notices": (*report.notices, notice)}
    )


def _verified(state: Path) -> dict[str, str]:
    try:
        found = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}
