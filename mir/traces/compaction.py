"""Compaction steps: closed segments into the database in one transaction, then away.

The order is the invariant: rows and the ``segments`` record commit together, then the
manifest records what each segment became, and only then are files deleted (or
quarantined) and head records dropped. A process killed anywhere in between leaves
either nothing loaded or files the next run recognises as loaded (it records them again;
the manifest keeps the first record).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mir.traces import database
from mir.traces.domain import CompactionResult
from mir.traces.manifest import Manifest
from mir.traces.segments import closed_segments, line_count, segment_files, torn_tail

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


@dataclass(frozen=True)
class LoadedSegment:
    """What one segment became in the database, as the manifest records it."""

    name: str
    lines: int  # positions 0..lines-1 (the chain's length, gaps included)
    head: str | None
    loaded: int  # rows actually stored
    unreadable: int = 0  # complete lines that did not load (garbled, edited)
    torn: bool = False  # a last line whose write never completed (a crash)
    fresh: bool = True  # False when a killed compactor had loaded it already

    @property
    def damaged(self) -> bool:
        return bool(self.unreadable or self.torn)

    def record(self, head: tuple[int, str] | None) -> dict[str, object]:
        expected = {"expected_lines": head[0], "expected_head": head[1]} if head else {}
        return {
            "op": "compacted",
            "segment": self.name,
            "lines": self.lines,
            "head": self.head,
            "loaded": self.loaded,
            "unreadable": self.unreadable,
            "torn": self.torn,
            **expected,
        }


def load_segments(con: duckdb.DuckDBPyConnection, files: list[Path]) -> list[LoadedSegment]:
    """Load the files in one transaction; returns what each file became.

    One pass over the files (a staging table doubled the cost). Every file is recorded
    in ``segments``, an empty or wholly unreadable one too (0 lines), so a re-run is a
    no-op for all of them. A line that does not load is counted, never silently lost:
    the file's lines minus the rows stored.
    """
    names = [path.name for path in files]
    loaded_before = {
        row[0]
        for row in con.execute(
            "SELECT name FROM segments WHERE list_contains($names, name)", {"names": names}
        ).fetchall()
    }
    fresh = [path for path in files if path.name not in loaded_before]
    if fresh:
        _insert(con, fresh)
    rows = con.execute(
        "SELECT s.name, s.lines, s.head, count(e.n) FROM segments s "
        "LEFT JOIN events e ON e.segment = s.name "
        "WHERE list_contains($names, s.name) GROUP BY ALL",
        {"names": names},
    ).fetchall()
    stored = {name: (lines, head, count) for name, lines, head, count in rows}
    result = []
    for path in files:
        lines, head, count = stored[path.name]
        torn = bool(torn_tail(path))
        unreadable = line_count(path) - count - torn
        fresh = path.name not in loaded_before
        result.append(LoadedSegment(path.name, lines, head, count, unreadable, torn, fresh))
    return result


def _insert(con: duckdb.DuckDBPyConnection, fresh: list[Path]) -> None:
    columns = database.quoted(database.STORED_COLUMNS)
    fresh_names = {"names": [path.name for path in fresh]}
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            f"INSERT INTO events ({columns}) SELECT {columns} FROM "
            f"({database.raw_segment_lines(fresh)}) WHERE event_id IS NOT NULL"
        )
        con.execute(
            "INSERT INTO segments SELECT f.name, coalesce(e.lines, 0), e.head, now() "
            "FROM (SELECT unnest($names) AS name) f LEFT JOIN ("
            "  SELECT segment, max(n) + 1 AS lines, arg_max(hash, n) AS head FROM events "
            "  WHERE list_contains($names, segment) GROUP BY segment) e ON e.segment = f.name",
            fresh_names,
        )
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


def remove_compacted(files: list[Path], loaded: list[LoadedSegment], quarantine: Path) -> list[str]:
    """Delete loaded segments; move those with unreadable lines aside for inspection."""
    damaged = {segment.name for segment in loaded if segment.damaged}
    moved = []
    for path in files:
        if path.name in damaged:
            quarantine.mkdir(parents=True, exist_ok=True)
            path.rename(quarantine / path.name)
            moved.append(path.name)
        else:
            path.unlink(missing_ok=True)
    return moved


def compact_batch(
    db_path: Path, segments: Path, manifest: Manifest, quarantine: Path, budget: int
) -> CompactionResult:
    """One batch of closed segments into the database (the exclusive lock is held)."""
    con = database.connect(db_path, read_only=False)
    try:
        if "0004_create_adopted" in (applied := database.migrate(con, db_path)):
            adopt(con, manifest, segments, upgraded="0001_create_events" not in applied)
        files = next_batch(closed_segments(segments), budget)
        if not files:
            return CompactionResult()
        loaded = load_segments(con, files)
    except Exception as exc:
        if database.is_database_error(exc):
            raise database.explain(db_path, exc) from exc
        raise
    finally:
        con.close()
    return finish_batch(files, loaded, manifest, quarantine)


def finish_batch(
    files: list[Path], loaded: list[LoadedSegment], manifest: Manifest, quarantine: Path
) -> CompactionResult:
    """After the commit: the manifest records what each segment became and what its head
    record said while it was written, then the files and head records go."""
    heads = [segment.record(manifest.head(segment.name)) for segment in loaded]
    manifest.record(*heads, fsync=True)
    quarantined = remove_compacted(files, loaded, quarantine)
    for segment in loaded:
        manifest.drop_head(segment.name)
    return CompactionResult(
        segments=len(loaded),
        events=sum(segment.loaded for segment in loaded if segment.fresh),
        skipped_lines=sum(segment.unreadable + segment.torn for segment in loaded),
        quarantined=tuple(quarantined),
    )


def adopt(
    con: duckdb.DuckDBPyConnection, manifest: Manifest, segments: Path, *, upgraded: bool
) -> None:
    """A store written before manifests existed: record what it holds now (the manifest
    vouches for it from here on, not for what happened to it before)."""
    if not upgraded:
        return
    log = manifest.read_log()
    rows = con.execute(
        "SELECT name, lines, head, (SELECT count(*) FROM events WHERE segment = name) FROM segments"
    ).fetchall()
    records: list[dict[str, object]] = []
    for name, lines, head, count in rows:
        records.append({"op": "open", "segment": name, "adopted": True})
        records.append(LoadedSegment(name, lines, head, count).record(None))
    for path in segment_files(segments):
        if path.name not in log.opened:
            records.append({"op": "open", "segment": path.name, "adopted": True})
    manifest.record(*records, fsync=True)
