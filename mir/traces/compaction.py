"""Compaction steps: closed segments into the database in one transaction, then away.

The order is the invariant: rows and the ``segments`` record commit together, and only
then are files deleted (or quarantined). A process killed anywhere in between leaves
either nothing loaded or files the next run recognises as loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mir.traces import database
from mir.traces.segments import line_count, torn_tail

if TYPE_CHECKING:
    import duckdb


def next_batch(files: list[Path], budget: int) -> list[Path]:
    """The oldest files up to ``budget`` bytes (always at least one)."""
    batch, size = [], 0
    for path in files:
        try:
            length = path.stat().st_size
        except FileNotFoundError:
            continue
        if batch and size + length > budget:
            break
        batch.append(path)
        size += length
    return batch


def load_segments(con: duckdb.DuckDBPyConnection, files: list[Path]) -> tuple[int, dict[str, int]]:
    """Load the files in one transaction; returns (lines loaded, unreadable per segment).

    One pass over the files (a staging table doubled the cost). The per-segment record
    is computed from the rows just inserted; unreadable lines are the file's lines that
    did not load.
    """
    names = [path.name for path in files]
    loaded_before = {
        row[0]
        for row in con.execute(
            "SELECT name FROM segments WHERE list_contains($names, name)", {"names": names}
        ).fetchall()
    }
    fresh = [path for path in files if path.name not in loaded_before]
    if not fresh:
        return 0, {}
    columns = database.quoted(database.STORED_COLUMNS)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            f"INSERT INTO events ({columns}) SELECT {columns} FROM "
            f"({database.raw_segment_lines(fresh)}) WHERE event_id IS NOT NULL"
        )
        fresh_names = {"names": [path.name for path in fresh]}
        recorded = con.execute(
            "INSERT INTO segments SELECT segment, max(n) + 1, arg_max(hash, n), now() "
            "FROM events WHERE list_contains($names, segment) GROUP BY segment "
            "RETURNING name, lines",
            fresh_names,
        ).fetchall()
        # Lines whose event_id was stored before (or twice in this batch): all copies
        # stay for the hash chain, all but the first are shadowed for reads.
        con.execute(
            "INSERT INTO shadowed SELECT segment, n FROM events WHERE event_id IN ("
            "  SELECT event_id FROM events WHERE event_id IN ("
            "    SELECT event_id FROM events WHERE list_contains($names, segment))"
            "  GROUP BY event_id HAVING count(*) > 1) "
            "QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY segment, n) > 1 "
            "EXCEPT SELECT segment, n FROM shadowed",
            fresh_names,
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    loaded = dict(recorded)
    bad = {}
    for path in fresh:
        lines = line_count(path)
        if lines != loaded.get(path.name, 0):
            bad[path.name] = lines - loaded.get(path.name, 0)
    return sum(loaded.values()), bad


def remove_compacted(files: list[Path], bad: dict[str, int], quarantine: Path) -> list[str]:
    """Delete loaded segments; move those with unreadable lines aside for inspection."""
    moved = []
    for path in files:
        if path.name in bad or torn_tail(path):
            quarantine.mkdir(parents=True, exist_ok=True)
            path.rename(quarantine / path.name)
            moved.append(path.name)
        else:
            path.unlink(missing_ok=True)
    return moved
