"""Re-hashing stored lines, fast: segment files as raw bytes, database rows in SQL.

A segment line is ``{"v":1,"n":N,"hash":"H",<body without its "{">``, so its hashed
body is recovered from the bytes without parsing JSON (~2 us a line). A database row's
body is rebuilt in SQL and re-hashed with DuckDB's ``sha256``, every link at once
(``lag(hash)`` is the previous line's hash). SQL formats a few floats differently from
pydantic (``1e-05`` vs ``0.00001``): a row whose SQL hash differs is re-hashed again in
Python, exactly as it was written, before it is called a break -- so SQL is only ever a
fast path, never the judge.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.traces.domain import ChainBreak
from mir.traces.records import EVENT_FIELDS, genesis, link, stored_row_body

if TYPE_CHECKING:
    import duckdb

_PREFIX = re.compile(rb'\{"v":\d+,"n":(\d+),"hash":"([0-9a-f]{64})",')
EDITED = "content or link does not match its hash (edited after writing)"

_TEXT = {"VARCHAR"}
_AT = (
    "'\"' || strftime(make_timestamp(epoch_us(\"at\")), '%Y-%m-%dT%H:%M:%S') || "
    "CASE WHEN epoch_us(\"at\") % 1000000 = 0 THEN '' ELSE '.' || "
    "lpad(((epoch_us(\"at\") % 1000000 + 1000000) % 1000000)::VARCHAR, 6, '0') END || 'Z\"'"
)


def _json(column: str, kind: str) -> str:
    if column == "at":
        return f"coalesce({_AT}, 'null')"
    if column == "data":
        return "coalesce(nullif(\"data\", ''), '{}')"
    if column == "reasons":
        return "coalesce(to_json(\"reasons\")::VARCHAR, '[]')"
    if kind in _TEXT:
        return f"coalesce(to_json(\"{column}\")::VARCHAR, 'null')"
    return f"coalesce(\"{column}\"::VARCHAR, 'null')"


# The canonical body (records.canonical_body) of a row, as SQL.
BODY_SQL = (
    "'{' || "
    + " || ',' || ".join(
        f"'\"{column}\":' || {_json(column, kind)}" for column, kind in EVENT_FIELDS.items()
    )
    + " || '}'"
)
_FIELDS_SQL = ", ".join('epoch_us("at")' if c == "at" else f'"{c}"' for c in EVENT_FIELDS)


@dataclass
class FileScan:
    """What reading a segment file from some line onwards found."""

    lines: int
    offset: int
    last: str
    breaks: list[ChainBreak] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict)
    torn: bool = False
    checked: int = 0


def scan_segment(
    path: Path,
    *,
    start: tuple[int, int, str] | None = None,
    want: Iterable[int] = (),
) -> FileScan:
    """Re-hash the file's lines from ``start`` = (line, byte offset, previous hash),
    checking each line sits at its own position: a moved, removed or inserted line
    breaks the sequence even when every line's own hash holds."""
    name = path.name
    lines, offset, prev = start or (0, 0, genesis(name))
    wanted = set(want)
    scan = FileScan(lines, offset, prev)
    known = True  # False after an unreadable line: the next link cannot be checked

    def broken(problem: str) -> None:
        scan.breaks.append(
            ChainBreak(segment=name, line=scan.lines, event_id=None, problem=problem)
        )

    with path.open("rb") as handle:
        handle.seek(offset)
        for raw in handle:
            if not raw.endswith(b"\n"):
                scan.torn = True  # a write in progress, or a writer that crashed mid-line
                break
            match = _PREFIX.match(raw)
            if match is None:
                broken("unreadable line (not a trace record): damaged or edited")
                known = False
            else:
                n, digest = int(match.group(1)), match.group(2).decode()
                body = b"{" + raw[match.end() : -1]
                if n != scan.lines:
                    broken(f"line out of place: it is line {n} of the chain (moved or removed)")
                elif known and hashlib.sha256(prev.encode() + b"\n" + body).hexdigest() != digest:
                    broken(EDITED)
                prev, known = digest, True
                if scan.lines in wanted:
                    scan.hashes[scan.lines] = digest
            scan.lines += 1
            scan.checked += 1
            scan.offset += len(raw)
            scan.last = prev
    return scan


def line_before(path: Path, offset: int) -> tuple[int, str] | None:
    """(n, hash) of the line that ends at byte ``offset``: where an incremental scan
    resumes, checked to still be what the last verify saw."""
    with path.open("rb") as handle:
        if offset <= 0 or handle.seek(0, 2) < offset:
            return None
        end = start = offset - 1  # the line's own newline is at ``end``
        buffer = b""
        while start > 0:
            step = min(1 << 16, start)
            start -= step
            handle.seek(start)
            buffer = handle.read(step) + buffer
            cut = buffer.rfind(b"\n", 0, end - start)
            if cut >= 0:
                buffer = buffer[cut + 1 : end - start]
                break
        else:
            buffer = buffer[: end - start]
    match = _PREFIX.match(buffer)
    return (int(match.group(1)), match.group(2).decode()) if match else None


def check_rows(
    con: duckdb.DuckDBPyConnection, segments: list[str] | None, *, table: str = "events"
) -> list[ChainBreak]:
    """Every link of the given segments' rows (all segments when None), in ``table``
    (the fleet's lake: ``lake.events``)."""
    scope, params = (
        ("true", {})
        if segments is None
        else (
            "list_contains($names, segment)",
            {"names": segments},
        )
    )
    sql = (
        f"SELECT segment, n, prev_n, prev_hash, hash, {_FIELDS_SQL} FROM ("
        f"  SELECT *, lag(n) OVER w AS prev_n, lag(hash) OVER w AS prev_hash FROM {table} "
        f"  WHERE {scope} WINDOW w AS (PARTITION BY segment ORDER BY n)) "
        "WHERE coalesce(prev_n, -1) <> n - 1 OR hash IS DISTINCT FROM sha256("
        f"coalesce(prev_hash, sha256('mir-trace-segment:' || segment)) || chr(10) || {BODY_SQL})"
        " ORDER BY segment, n"
    )
    breaks = []
    for row in con.execute(sql, params).fetchall():
        segment, n, prev_n, prev_hash, digest = row[:5]
        fields: dict[str, Any] = dict(zip(EVENT_FIELDS, row[5:], strict=True))
        if (prev_n is None and n != 0) or (prev_n is not None and prev_n < n - 1):
            problem = "line(s) missing before this one"
        elif prev_n is not None and prev_n == n:
            problem = "line repeated"
        elif link(prev_hash or genesis(segment), stored_row_body(fields)) != digest:
            problem = EDITED
        else:
            continue  # SQL formatted a float its own way; the exact body hashes right
        breaks.append(
            ChainBreak(segment=segment, line=n, event_id=fields["event_id"], problem=problem)
        )
    return breaks
