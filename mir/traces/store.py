"""TraceStore: many processes append, any process reads, one at a time compacts.

Storage design (why it looks like this)
---------------------------------------
A DuckDB file admits one process at a time (a second process cannot even open it
read-only while a writer holds it), and opening it costs ~46 ms. An app, a ``mir run``
and an eval must all write traces at once, so the hot path never touches DuckDB:

``<traces>/segments/<host>-<pid>-<id>.jsonl``
    Each writing process appends JSON lines (one per event, hash-chained, secrets
    already redacted) to its own segment with one ``os.write`` per ``append`` call.
    No lock is shared between writers, so writers never wait for each other or for
    readers. A process holds a ``flock`` on its live segment (see ``segments.py``).
``<traces>/traces.duckdb``
    Compacted events. ``compact()`` takes the exclusive folder lock
    (``traces.lock``), bulk-loads every *closed* segment with one
    ``INSERT ... SELECT FROM read_json`` (~100x faster than row inserts), records the
    segments in the same transaction, then deletes the files (a backlog goes in
    ~64 MB batches, letting go of the lock in between: readers wait ~1 s at most).
    A compactor killed between commit and delete leaves files the next run
    recognises as loaded: no event is lost, none is counted twice. Segments with
    unreadable lines are moved to ``quarantine/``, not deleted, and said so.
``<traces>/manifest/``
    What the store should hold, kept apart from it: segments opened, each one's line
    count and head hash, what compaction made of them (``manifest.py``). It is what
    makes a deleted segment, cut lines or a deleted database visible to ``verify()``
    and to ``flow(verify=True)``, which approve/reject call before acting.
Readers
    take the folder lock *shared* on a read-only descriptor (so reading works on a
    read-only ``.mir``, and a compaction never runs mid-query), open the database
    read-only and query ``events UNION ALL read_json(live segments)``,
    one row per ``event_id`` (repeats found at compaction are listed in
    ``shadowed``). Torn last lines (a write in progress, or a crashed writer) read
    as nothing. DuckDB's own lock errors never reach users: every mir process opens
    the file only under the folder lock, and a foreign holder (a duckdb shell) is
    reported as one line naming the file.

Compaction also runs automatically, never waiting for the lock, when a reader starts
or a writer rotates to a new segment (then in a background thread, so an ``append``
on a decision path never pays for it) and at least ``compact_after`` closed segments
are waiting.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.traces import database, observers
from mir.traces.compaction import compact_batch
from mir.traces.domain import (
    CompactionResult,
    EventsSql,
    FlowSummary,
    IntegrityReport,
    TraceEvent,
    TraceSettings,
    TraceStoreError,
)
from mir.traces.lake import Lake, fleet_lake
from mir.traces.lake_checks import check_flow_segments, with_lake
from mir.traces.live import start_live_export
from mir.traces.manifest import Manifest
from mir.traces.records import (
    EVENT_FIELDS,
    event_from_fields,
    redacted_body,
    with_instants,
)
from mir.traces.redaction import Redactor, secret_env_values
from mir.traces.segments import SegmentWriter, closed_segments, folder_lock
from mir.traces.shipping import lake_status, parquet_export, ship_quietly
from mir.traces.sources import FlowFilter, filtered_events, listing_sql
from mir.traces.verification import refuse_tampered, verify_store
from mir.traces.views import Tables, Views

if TYPE_CHECKING:
    import duckdb

    from mir.project import Project

_EVENT_SELECT = ", ".join('epoch_us("at") AS "at"' if c == "at" else f'"{c}"' for c in EVENT_FIELDS)


class TraceStore:
    """Append-only trace store of one project (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        redact_values: Sequence[str] = (),
        redact_env: Sequence[str] = (),
        redact_patterns: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
        fsync: bool = False,
        segment_events: int = 20_000,
        compact_after: int = 8,
        lock_timeout: float = 30.0,
        batch_bytes: int = 64 << 20,
        lake: Lake | None = None,
        lake_reads: bool = True,
    ) -> None:
        self.directory = Path(directory)
        self.segments_dir = self.directory / "segments"
        self.quarantine_dir = self.directory / "quarantine"
        self.db_path = self.directory / "traces.duckdb"
        self.lock_path = self.directory / "traces.lock"
        self.manifest = Manifest(self.directory / "manifest")
        env = os.environ if environ is None else environ
        self._redactor = Redactor(
            [*redact_values, *secret_env_values(env, redact_env)], patterns=redact_patterns
        )
        self._writer = SegmentWriter(
            self.segments_dir, self.manifest, max_lines=segment_events, fsync=fsync
        )
        # Things a user should hear about (unreadable lines quarantined by a compaction
        # this store ran); the CLI prints them, a library caller may read them.
        self.warnings: list[str] = []
        self._compact_after = compact_after
        self._lock_timeout = lock_timeout
        self._batch_bytes = batch_bytes
        self._mutex = threading.Lock()
        self._background: threading.Thread | None = None
        self.lake = lake
        self._views = Views(
            self.directory,
            self.manifest,
            lock_timeout=lock_timeout,
            before_reading=self._auto_compact,
            upgrade=self.compact,
            lake=lake if lake_reads else None,
        )

    @classmethod
    def for_project(cls, project: Project, *, fleet_wide: bool = True) -> TraceStore:
        """The store at ``[tool.mir.traces] path`` (default ``<state_dir>/traces``); with a
        trace lake its reads cover every host, unless ``fleet_wide`` is False."""
        settings = project.section("traces", TraceSettings)
        folder = project.root / settings.path if settings.path else project.state_dir / "traces"
        start_live_export(project, folder)
        return cls(
            folder,
            redact_env=settings.redact_env,
            redact_patterns=settings.redact_patterns,
            fsync=settings.fsync,
            segment_events=settings.segment_events,
            compact_after=settings.compact_after,
            lake=fleet_lake(project),
            lake_reads=fleet_wide,
        )

    # -- writing -------------------------------------------------------------------

    def append(self, events: Sequence[TraceEvent]) -> None:
        """Write the events (redacted, hash-chained); durable against a crash on return."""
        if not events:
            return
        written = [redacted_body(event, self._redactor) for event in events]
        bodies = [body for body, _ in written]
        with self._mutex:
            rotations = self._writer.rotations
            try:
                self._writer.write(bodies)
            except OSError as exc:
                raise TraceStoreError(
                    f"cannot write traces ({exc.strerror})",
                    where=str(exc.filename or self.segments_dir),
                    hint="the trace folder must be writable for a decision to run",
                ) from exc
            rotated = self._writer.rotations != rotations
        if observers.watching():
            observers.notify_stored(events, written, self.directory.resolve())
        if rotated:
            self._compact_in_background()

    def redact(self, value: Any) -> Any:
        """``value`` (a JSON-like value) with this store's secrets replaced: for records
        kept next to the traces (the execution ledger, eval reports), so they leak
        nothing either. The cheap pre-check events get runs first: most values hold no
        secret and are returned as they are, without the walk."""
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # not JSON-like (a cycle): walk it
            return self._redactor.value(value)
        if not self._redactor.might_contain(text):
            return value
        return self._redactor.value(value)

    def close(self) -> None:
        """Close this process's segment (it becomes compactable); waits for a background
        compaction this store started."""
        with self._mutex:
            self._writer.close()
            background, self._background = self._background, None
        if background is not None:
            background.join()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- compaction ----------------------------------------------------------------

    def compact(
        self, *, wait: float | None = None, max_batches: int | None = None
    ) -> CompactionResult:
        """Fold closed segments into the database; ``skipped`` if another process is.

        Works in batches of about ``batch_bytes`` of segment files, releasing the lock
        between batches, so a large backlog never blocks readers for long (~1 s a batch).
        """
        patience = self._lock_timeout if wait is None else wait
        total = CompactionResult()
        for _ in range(max_batches) if max_batches is not None else itertools.count():
            with folder_lock(self.lock_path, exclusive=True, wait=patience) as locked:
                if not locked:
                    return total.model_copy(update={"skipped": not total.segments})
                batch = self._compact_batch()
            if batch.segments == 0:
                break
            total = CompactionResult(
                segments=total.segments + batch.segments,
                events=total.events + batch.events,
                skipped_lines=total.skipped_lines + batch.skipped_lines,
                quarantined=total.quarantined + batch.quarantined,
            )
        if self.lake is None or not self.db_path.exists():
            return total
        # fleet mode: ship what this database holds and the lake lacks (shipping.py), one
        # shipper per host; an unreachable lake is a warning, never a failed compaction
        with folder_lock(self.lock_path, exclusive=True, wait=patience) as locked:
            if not locked:
                return total
            shipped, events = ship_quietly(self.lake, self.db_path, self.warnings)
        return total.model_copy(update={"shipped": shipped, "shipped_events": events})

    def _compact_batch(self) -> CompactionResult:
        """One batch, under the exclusive lock the caller holds."""
        result = compact_batch(
            self.db_path, self.segments_dir, self.manifest, self.quarantine_dir, self._batch_bytes
        )
        if result.skipped_lines:
            self.warnings.append(
                f"{result.skipped_lines} torn or unreadable trace line(s) could not be "
                f"loaded; segment(s) kept in {self.quarantine_dir}: "
                f"{', '.join(result.quarantined)}"
            )
        return result

    def _compact_in_background(self) -> None:
        # A compaction takes ~1 s per 100k events: never inside the caller's append,
        # which sits on a decision path. Killing the process mid-way is safe (the load
        # is one transaction and re-running it is a no-op).
        with self._mutex:
            if self._background is not None and self._background.is_alive():
                return
            self._background = threading.Thread(
                target=self._auto_compact,
                kwargs={"max_batches": None},
                name="mir-traces-compaction",
                daemon=True,
            )
            self._background.start()

    def _auto_compact(self, *, max_batches: int | None = 1) -> None:
        # A reader compacts one batch at most before answering: a large backlog is the
        # background writers' (or `mir traces compact`'s) job, not a query's.
        if len(closed_segments(self.segments_dir)) < self._compact_after:
            return
        if not os.access(self.directory, os.W_OK):
            return  # a read-only store: reading must work, compacting cannot
        try:
            self.compact(wait=0, max_batches=max_batches)
        except (TraceStoreError, OSError):
            # Best effort: the events are safe in their segments. Readers report the
            # database problem themselves; an append must never fail because of it.
            return

    # -- reading -------------------------------------------------------------------

    def flow(self, flow_id: str, *, verify: bool = False) -> list[TraceEvent]:
        """Every event of one flow, ordered by ``seq`` (empty if the flow is unknown).

        ``verify=True`` (what approve/reject use) first re-hashes every segment holding
        the flow's lines against the manifest, in the same consistent view the events
        are read from, and raises ``TamperedTraceError`` on any mismatch.
        """
        with self._views.reading() as (con, has_db, files, lake):
            where, params = "flow_id = $flow", {"flow": flow_id}
            if verify:
                source = database.stored_lines(has_db=has_db, files=files, where=where, lake=lake)
                names = con.execute(f"SELECT DISTINCT segment FROM ({source})", params)
                segments = [row[0] for row in names.fetchall()]
                breaks = check_flow_segments(
                    con, self.manifest, self.segments_dir, has_db=has_db, lake=lake,
                    segments=segments,
                )  # fmt: skip
                refuse_tampered(flow_id, breaks)
            source = database.unique_events(has_db=has_db, files=files, where=where, lake=lake)
            rows = con.execute(
                f'SELECT {_EVENT_SELECT} FROM ({source}) ORDER BY seq, "at", segment, n', params
            ).fetchall()
        return [event_from_fields(dict(zip(EVENT_FIELDS, row, strict=True))) for row in rows]

    def flow_ids(self, prefix: str, *, limit: int = 10) -> list[str]:
        """Flow ids starting with ``prefix`` (at most ``limit``), for unique-prefix lookup."""
        sql = "SELECT DISTINCT flow_id FROM ({events}) ORDER BY flow_id LIMIT $limit"
        rows = self._views.query(
            sql, {"p": prefix, "limit": limit}, where="starts_with(flow_id, $p)"
        )
        return [row[0] for row in rows]

    def agent_names(self) -> list[str]:
        """Every agent name in the store, sorted (to resolve ``--agent triage``)."""
        rows = self._views.query("SELECT DISTINCT agent FROM ({events}) ORDER BY agent", {})
        return [row[0] for row in rows if row[0] is not None]

    def list_flows(
        self,
        *,
        agent: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        limit: int = 50,
        source: str | Sequence[str] | None = None,
    ) -> list[FlowSummary]:
        """Flows, most recently updated first, optionally filtered. ``source``: only
        flows of that source or sources (``FLOW_SOURCES``; see ``sources.py``)."""
        sql, where, params = listing_sql(
            agent=agent, status=status, since=since, limit=limit, source=source
        )
        rows = self._views.query(sql, params, where=where, columns=True)
        return [FlowSummary.model_validate(with_instants(row)) for row in rows]

    def count_events(self) -> int:
        """Distinct events stored (database and live segments)."""
        rows = self._views.query("SELECT count(*) FROM ({events})", {})
        return int(rows[0][0])

    def events(self, flows: FlowFilter | None = None) -> Iterator[TraceEvent]:
        """Every event (of the ``flows`` kept), ordered by time then flow and seq, streamed
        (for export)."""
        with self._views.reading() as (con, has_db, files, lake):
            source, params = filtered_events(has_db, files, flows, lake=lake)
            cursor = con.execute(
                f'SELECT {_EVENT_SELECT} FROM ({source}) ORDER BY "at", flow_id, seq', params
            )
            while rows := cursor.fetchmany(10_000):
                for row in rows:
                    yield event_from_fields(dict(zip(EVENT_FIELDS, row, strict=True)))

    def verify(self, *, full: bool = False) -> IntegrityReport:
        """Check the store against its manifest and re-hash the lines added since the
        last successful verify (every line with ``full``); see ``verification.py``."""
        with self._views.reading() as (con, has_db, _, lake):
            db = con if has_db else None
            report = verify_store(
                self.manifest, self.segments_dir, db, full=full, db_path=self.db_path
            )
            state = self.manifest.folder / "lake-verified.json"
            return with_lake(report, con, has_db, state=state, full=full) if lake else report

    def lake_status(self) -> dict[str, Any] | None:
        """In fleet mode with a trace lake: its data path, what it holds, and this host's
        compacted segments not shipped yet (live segments ship once compacted); None
        without a lake."""
        return lake_status(self._views)

    def export_parquet(self, output: Path, flows: FlowFilter | None = None) -> int:
        """Write every event (of the ``flows`` kept) to a Parquet file; returns the number
        of events."""
        return parquet_export(self._views, output, flows)

    @contextmanager
    def analysis(
        self, *, write: bool = False, tables: Tables | None = None
    ) -> Iterator[tuple[duckdb.DuckDBPyConnection, EventsSql, bool]]:
        """A consistent view for analytical SQL over every stored event (drift metrics).

        Yields ``(con, events, writable)``: ``events(where)`` is the SQL of every unique
        event matching ``where`` (database and live segments). ``write=True`` holds the
        exclusive folder lock and opens the database read-write and migrated, so a caller
        can also write the tables its capability keeps here: ``tables`` is their
        ``(scope, steps)`` (drift's: ``mir/drift/tables.py``), migrated after the store's
        own steps; compaction and readers wait, appends never do. A store that
        is missing or not writable (its folder, or a database file this user may only
        read) falls back to the shared read view (``writable`` False).
        """
        with self._views.analysis(write=write, tables=tables) as view:
            yield view
