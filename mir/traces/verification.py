"""``mir traces verify``: the store against its manifest, and every new line re-hashed.

Two kinds of check, so a verify stays cheap as the store grows:

* **structure, every time, in full**: every segment the manifest says was opened is
  still somewhere (a live file, or rows in the database); every compacted segment has
  as many rows and the same head hash in the database as the manifest recorded; every
  live file holds at least the lines its head record counts, ending in the hash it
  records; nothing is in the store that the manifest never saw; the manifest itself
  still starts with the bytes the last verify read. Counting is cheap (one GROUP BY).
* **content, incrementally**: lines are re-hashed only from where the last successful
  verify stopped (``manifest/verified.json``): new database segments, and each live
  file from its last verified line on (after checking that line is unchanged).
  ``--full`` re-hashes everything.

So an incremental verify misses an edit inside lines it already verified that keeps
every count and head intact (rewriting a line's hash breaks the next link only when
that link is re-hashed): ``--full`` finds those.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.traces.chains import check_rows, line_before, scan_segment
from mir.traces.domain import ChainBreak, IntegrityReport, TamperedTraceError
from mir.traces.manifest import Log, Manifest
from mir.traces.segments import segment_files

if TYPE_CHECKING:
    import duckdb


ROWS_PER_CHECK = 500_000


@dataclass
class _Run:
    breaks: list[ChainBreak] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    heads: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    checked: int = 0

    def broken(self, segment: str, line: int, problem: str) -> None:
        self.breaks.append(ChainBreak(segment=segment, line=line, event_id=None, problem=problem))


def stored_segments(
    con: duckdb.DuckDBPyConnection | None, names: list[str] | None = None
) -> dict[str, list[Any]]:
    """Per segment in the database (only ``names`` when given): [lines recorded, head
    recorded, rows stored, last position + 1, hash of the last row]."""
    if con is None:
        return {}
    only = "list_contains($names, segment)" if names is not None else "true"
    rows = con.execute(
        "SELECT coalesce(s.name, e.segment), s.lines, s.head, coalesce(e.rows, 0), e.last, "
        f"e.head FROM (SELECT * FROM segments WHERE {only.replace('segment', 'name')}) s "
        "FULL JOIN (SELECT segment, count(*) AS rows, max(n) + 1 AS last, "
        f"arg_max(hash, n) AS head FROM events WHERE {only} GROUP BY segment) e "
        "ON e.segment = s.name",
        {"names": names} if names is not None else {},
    ).fetchall()
    # Rows without a ``segments`` record (inserted by hand) show up with lines None.
    return {name: rest for name, *rest in rows}


def verify_store(
    manifest: Manifest,
    segments_dir: Path,
    con: duckdb.DuckDBPyConnection | None,
    *,
    full: bool,
    db_path: Path,
) -> IntegrityReport:
    run = _Run()
    # Order matters against live writers: heads, then files, then the log (a writer
    # records a segment before its file appears and its head before its first line).
    heads = manifest.heads()
    files = {path.name: path for path in segment_files(segments_dir)}
    log = manifest.read_log()
    state = None if full else manifest.state()
    if state is not None and not _log_unchanged(log, state, run):
        state = None
    adopted = _adopted(con)
    stored = stored_segments(con)
    _check_log(log, run)
    new_compacted = _check_compacted(log, stored, state, adopted, run, db_path, con, set(files))
    if con is not None:
        rehash = [n for n in (new_compacted if state else stored) if n in stored]
        _check_all_rows(con, rehash, stored, run)
    verified_files = _check_files(manifest, files, heads, log, adopted, state, run)
    _check_missing(log, files, manifest, segments_dir, stored, run)
    digest = hashlib.sha256(
        "\n".join(f"{s}:{run.heads[s][0]}:{run.heads[s][1]}" for s in sorted(run.heads)).encode()
    ).hexdigest()
    lines = sum(count for count, _ in run.heads.values())
    report = IntegrityReport(
        segments=len(run.heads),
        lines=lines,
        checked=run.checked,
        full=state is None,
        breaks=tuple(run.breaks),
        notices=tuple(run.notices),
        digest=digest,
    )
    if report.ok:
        saved = manifest.save_state(
            {
                "log_size": log.size,
                "log_sha256": log.prefix_hash(log.size),
                "files": verified_files,
                "digest": digest,
                "at": datetime.now(UTC).isoformat(),
            }
        )
        if not saved:
            report = report.model_copy(
                update={"notices": (*report.notices, "read-only store: progress not recorded")}
            )
    return report


def _check_all_rows(
    con: duckdb.DuckDBPyConnection, names: list[str], stored: dict[str, Any], run: _Run
) -> None:
    # A few hundred thousand rows at a time: the window over them is held in memory.
    group: list[str] = []
    rows = 0
    for position, name in enumerate(sorted(names), 1):
        group.append(name)
        rows += stored[name][2]
        if rows >= ROWS_PER_CHECK or position == len(names):
            run.breaks.extend(check_rows(con, group))
            run.checked += rows
            group, rows = [], 0


def _adopted(con: duckdb.DuckDBPyConnection | None) -> set[str]:
    if con is None:
        return set()
    # Readers migrate an older database before reading it: the table is always there.
    return {row[0] for row in con.execute("SELECT name FROM adopted").fetchall()}


def _log_unchanged(log: Log, state: dict[str, Any], run: _Run) -> bool:
    size = state.get("log_size", 0)
    if log.size < size or log.prefix_hash(size) != state.get("log_sha256"):
        run.broken(
            "manifest/log.jsonl", 0, "the manifest was rewritten or cut since the last verify"
        )
        return False
    return True


def _check_log(log: Log, run: _Run) -> None:
    for number in log.unreadable:
        run.broken("manifest/log.jsonl", number, "unreadable manifest record: damaged or edited")
    for segment in log.conflicts:
        run.broken(segment, 0, "the manifest records two different compactions of this segment")


def _check_compacted(
    log: Log,
    stored: dict[str, Any],
    state: dict[str, Any] | None,
    adopted: set[str],
    run: _Run,
    db_path: Path,
    con: duckdb.DuckDBPyConnection | None,
    files: set[str],
) -> list[str]:
    """Compacted segments against the database; returns those compacted since the last
    verify (their rows are re-hashed in an incremental run)."""
    since = state.get("log_size", 0) if state else 0
    fresh = []
    missing_db = 0
    for name, (offset, record) in log.compacted.items():
        lines, head = record.get("lines", 0), record.get("head")
        run.heads[name] = (lines, head)
        if offset >= since:
            fresh.append(name)
        if con is None:
            missing_db += record.get("loaded", lines)
            continue
        if name not in stored:
            run.broken(name, 0, f"compacted segment ({lines} lines) is gone from {db_path.name}")
            continue
        recorded_lines, recorded_head, rows, last, row_head = stored[name]
        if (recorded_lines, recorded_head) != (lines, head):
            run.broken(name, lines, "the database's record of this segment was changed")
        if rows < record.get("loaded", rows):
            gone = record["loaded"] - rows
            run.broken(name, last or 0, f"{gone} line(s) removed from the database")
        elif rows > record.get("loaded", rows):
            added = rows - record["loaded"]
            run.broken(name, last or 0, f"{added} line(s) added to the database")
        elif (last or 0, row_head) != (lines, head) and rows:
            run.broken(name, last or 0, "the segment's last lines in the database were changed")
        _check_expected(name, record, name in adopted or name in log.adopted, run)
    if missing_db:
        run.broken(
            db_path.name,
            0,
            f"{db_path.name} is missing: {len(log.compacted)} compacted segment(s), "
            f"{missing_db} line(s) recorded in the manifest are gone",
        )
    for name in stored:
        if name not in log.compacted and name not in adopted:
            run.heads[name] = (stored[name][0] or 0, stored[name][1])
            if name in files:  # a compactor killed before its manifest record
                run.notices.append(f"{name}: compaction was interrupted; it completes next time")
                continue
            run.broken(name, 0, "the database holds a segment the manifest never recorded")
    return fresh


def _check_expected(name: str, record: dict[str, Any], adopted: bool, run: _Run) -> None:
    lines, head = record.get("lines", 0), record.get("head")
    if record.get("unreadable"):
        run.broken(
            name,
            lines,
            f"{record['unreadable']} unreadable line(s) at compaction; the file is kept "
            f"in quarantine/{name}",
        )
    if record.get("torn"):
        run.notices.append(f"{name}: a torn last line (a crashed write) is kept in quarantine/")
    if "expected_lines" not in record:
        if not adopted:
            run.broken(name, lines, "its head record was missing when it was compacted")
        return
    expected = record["expected_lines"]
    if expected < 0:
        run.broken(name, lines, "its head record was unreadable when it was compacted")
    elif expected > lines:
        run.broken(name, lines, f"{expected - lines} last line(s) removed before compaction")
    elif expected == lines and record.get("expected_head") != head:
        run.broken(name, lines, "its last line differs from the head recorded while writing")


def _check_files(
    manifest: Manifest,
    files: dict[str, Path],
    heads: dict[str, tuple[int, str]],
    log: Log,
    adopted: set[str],
    state: dict[str, Any] | None,
    run: _Run,
) -> dict[str, list[Any]]:
    progress: dict[str, list[Any]] = {}
    previous = (state or {}).get("files", {})
    for name, path in files.items():
        if name in log.compacted:
            continue  # loaded; a killed compactor left the file (reads skip it)
        registered = name in log.opened or name in adopted
        if not registered:
            run.broken(name, 0, "segment not in the manifest (added by hand, or by an older mir)")
        # Read again when missing: a writer creates its head record before its file
        # appears, so a file listed after the heads were read still has one.
        head = heads.get(name) or manifest.head(name)
        start = _resume_point(path, previous.get(name), run)
        want = [head[0] - 1] if head and head[0] > 0 else []
        try:
            scan = scan_segment(path, start=start, want=want)
        except FileNotFoundError:
            continue  # compacted between listing and reading: the manifest has it now
        run.breaks.extend(scan.breaks)
        run.checked += scan.checked
        run.heads[name] = (scan.lines, scan.last)
        progress[name] = [scan.lines, scan.offset, scan.last]
        if scan.torn:
            run.notices.append(f"{name}: a torn last line (a write in progress or a crash)")
        if head is None:
            if name not in log.adopted:
                run.broken(name, scan.lines, "its head record (manifest/heads) is missing")
            continue
        count, last = head
        if count < 0:
            run.broken(name, scan.lines, "its head record is unreadable: damaged or edited")
        elif scan.lines < count:
            run.broken(name, scan.lines, f"{count - scan.lines} last line(s) removed")
        elif count and scan.hashes.get(count - 1, last) != last:
            run.broken(name, count - 1, "its last recorded line was rewritten")
    return progress


def _resume_point(path: Path, previous: list[Any] | None, run: _Run) -> tuple[int, int, str] | None:
    if not previous:
        return None
    lines, offset, last = previous
    if line_before(path, offset) != (lines - 1, last):
        run.broken(path.name, lines, "lines verified before were removed or rewritten")
        return None  # re-hash the whole file
    return lines, offset, last


def _check_missing(
    log: Log,
    files: dict[str, Path],
    manifest: Manifest,
    segments_dir: Path,
    stored: dict[str, Any],
    run: _Run,
) -> None:
    for name in sorted(log.opened - set(files) - set(log.compacted) - set(stored)):
        # Looked at again now: a writer may have opened it after the files were listed.
        head = manifest.head(name)
        if (head is not None and head[0] == 0) or (segments_dir / name).exists():
            continue  # being created or written right now (or its writer died first)
        count = f" ({head[0]} lines)" if head else ""
        run.broken(name, 0, f"segment file deleted{count}: it was never compacted")


def check_segments(
    manifest: Manifest,
    segments_dir: Path,
    con: duckdb.DuckDBPyConnection | None,
    names: list[str],
) -> list[ChainBreak]:
    """The named segments, in full, against the manifest: what ``mir approve`` checks
    before acting on a flow whose lines sit in them (milliseconds: a segment holds at
    most ``segment_events`` lines)."""
    run = _Run()
    log = manifest.read_log()
    adopted = _adopted(con)
    stored = stored_segments(con, names)
    compacted = [name for name in names if name in stored]
    if con is not None and compacted:
        run.breaks.extend(check_rows(con, compacted))
    for name in compacted:
        record = log.compacted.get(name, (0, None))[1]
        if record is None:
            if name not in adopted:
                run.broken(name, 0, "the manifest never recorded this segment")
            continue
        lines, head, rows, last, row_head = stored[name]
        if (
            (lines, head) != (record.get("lines"), record.get("head"))
            or (last or 0, row_head) != (lines, head)
            or rows != record.get("loaded", rows)
        ):
            run.broken(name, last or 0, "lines were removed or changed in the database")
        _check_expected(name, record, name in adopted or name in log.adopted, run)
    files = {name: segments_dir / name for name in names if name not in stored}
    _check_files(manifest, files, {}, log, adopted, None, run)
    return run.breaks


def refuse_tampered(flow_id: str, breaks: list[ChainBreak]) -> None:
    if breaks:
        first = breaks[0]
        raise TamperedTraceError(
            f"flow {flow_id}: its stored trace does not verify "
            f"({first.segment}:{first.line}: {first.problem}); nothing was run",
            hint="see `mir traces verify`",
        )
