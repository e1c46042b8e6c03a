"""Pending reviews across hosts: a flow paused on one host, decided from any other.

Only in fleet mode (``FleetStore.configured`` is not None); local mode never comes here.

- When a flow starts waiting, its host publishes it into ``review_pending``: the flow's
  events as they stand (snapshot, pending route event with the decision and the
  approvals rules recorded then, reviews so far) and their digest, the sha256 of their
  canonical JSON. A host that approves a flow it does not hold checks the digest, then
  copies the events into its own traces (same event ids), so its own resume reads and
  verifies them there like any local flow and records the outcome in its own traces.
- Every review of a flow, on any host, runs under that flow's Postgres advisory lock
  (a session lock on a hash of the flow id, released by the server if the process dies).
- The outcome is one row of ``review_outcomes`` (primary key: the flow id), inserted
  under the lock before anything is written or executed: first writer wins, whoever
  comes later is told who decided. The row gets its final status once the flow ends; a
  claim left without one (its process died mid-decision) refuses every later review
  (fail closed: the action may have run), unless its process's liveness lock is gone
  and no execution was ever claimed for the flow: then nothing ran and it waits again.
  A refusal (a reviewer who may not, a bad correction) removes the claim again: nothing
  was written.
"""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mir.errors import UsageError
from mir.project import Project
from mir.runtime.ports import FlowAlreadyDecided
from mir.runtime.records import DecisionRecord
from mir.storage import FleetStore, Migration, StoreSettings, quiet_pool_log
from mir.traces import TraceEvent, TraceStore

SCOPE = "reviews"
MIGRATIONS = (
    Migration(
        "pending and outcome tables",
        (
            "CREATE TABLE review_pending (flow_id TEXT PRIMARY KEY, agent TEXT NOT NULL, "
            "host TEXT NOT NULL, events JSONB NOT NULL, digest TEXT NOT NULL, "
            "created_at TIMESTAMPTZ NOT NULL, ttl_s DOUBLE PRECISION, "
            "published_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            "CREATE INDEX review_pending_created ON review_pending (created_at, flow_id)",
            "CREATE TABLE review_outcomes (flow_id TEXT PRIMARY KEY, verdict TEXT NOT NULL, "
            "status TEXT, by TEXT NOT NULL, host TEXT NOT NULL, "
            "at TIMESTAMPTZ NOT NULL DEFAULT now(), settled_at TIMESTAMPTZ)",
        ),
    ),
    # the claimer's liveness token: a claim whose process died before anything ran is
    # no longer a refusal for ever
    Migration(
        "outcome claimer liveness",
        "ALTER TABLE review_outcomes ADD COLUMN IF NOT EXISTS live TEXT",
    ),
)


@dataclass(frozen=True)
class PublishedFlow:
    """One row of ``review_pending``: what any host needs to show or decide the flow."""

    flow_id: str
    agent: str
    host: str
    events: list[dict[str, Any]]
    digest: str
    created_at: datetime
    ttl_s: float | None


def fleet_of(project: Project) -> FleetStore | None:
    """The project's fleet store with the review tables migrated; None in local mode."""
    fleet = FleetStore.configured(project.section("store", StoreSettings))
    if fleet is not None:
        quiet_pool_log()
        fleet.migrate(SCOPE, MIGRATIONS)
    return fleet


def host_name(project: Project) -> str:
    return f"{socket.gethostname()}:{project.root}"


def digest_of(events: Sequence[dict[str, Any]]) -> str:
    body = json.dumps(list(events), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def publish(
    fleet: FleetStore, project: Project, events: Sequence[TraceEvent], *, refresh: bool = True
) -> str:
    """Publish (or ``refresh``, after a partial approval) a waiting flow; its digest.
    Without ``refresh`` a flow already published is left as it is."""
    ordered = sorted(events, key=lambda e: e.seq)
    bodies = [e.model_dump(mode="json") for e in ordered]
    snap = next((e.data for e in ordered if e.step == "snapshot"), {})
    created = str(snap.get("created_at") or ordered[0].at.isoformat())
    ttl = snap.get("ttl_seconds")
    ttl = float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None
    digest = digest_of(bodies)
    with fleet.connection() as con:
        con.execute(
            "INSERT INTO review_pending (flow_id, agent, host, events, digest, created_at, ttl_s)"
            " VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s) ON CONFLICT (flow_id) DO "
            + ("UPDATE SET events = EXCLUDED.events, digest = EXCLUDED.digest, "
               "published_at = now()" if refresh else "NOTHING"),
            (ordered[0].flow_id, ordered[0].agent, host_name(project), json.dumps(bodies),
             digest, created, ttl),
        )  # fmt: skip
    return digest


def fleet_announcer(
    project: Project, traces: Any, then: Callable[[Any], None] | None
) -> Callable[[Any], None] | None:
    """``RuntimeDeps.on_pending`` in fleet mode: publish the waiting flow, then the
    review alerts (``then``); ``then`` itself in local mode."""
    try:
        fleet = fleet_of(project)
    except Exception:
        fleet = None
    if fleet is None:
        return then
    return _Publisher(fleet, project, traces, then)


class _Publisher:
    def __init__(self, fleet: FleetStore, project: Project, traces: Any, then: Any):
        self.fleet, self.project, self.traces, self.then = fleet, project, traces, then

    def __call__(self, record: DecisionRecord) -> None:
        try:
            publish(self.fleet, self.project, self.traces.flow(record.flow_id))
        finally:
            if self.then is not None:
                self.then(record)

    def close(self) -> None:
        closing = getattr(self.then, "close", None)
        if closing is not None:
            closing()


# more than any host holds waiting; the listing reads ids and a few fields, no events
_ALL_WAITING = 1_000_000


def publish_waiting(project: Project, *, dry_run: bool = False) -> list[str]:
    """Publish this host's waiting flows that the fleet store never got: those that
    started waiting before the project had a fleet store (``mir store migrate``), or
    whose publish failed (the server went away as the flow paused). A flow the fleet
    already holds or has decided is left alone. The flows published (``dry_run``: that
    would be); [] in local mode. Run by every read of the review queue on this host."""
    # a dry run creates no table: a fleet without the review tables has none of them
    settings = project.section("store", StoreSettings)
    fleet = FleetStore.configured(settings) if dry_run else fleet_of(project)
    if fleet is None:
        return []
    store = TraceStore.for_project(project, fleet_wide=False)  # this host's flows
    try:
        listed = store.list_flows(status="pending_review", limit=_ALL_WAITING)
        ids = [flow.flow_id for flow in listed]
        if not ids:
            return []
        with fleet.connection() as con:
            there = con.execute("SELECT to_regclass('review_outcomes')").fetchone()[0]
            known = (
                con.execute(
                    "SELECT flow_id FROM review_pending WHERE flow_id = ANY(%s) UNION "
                    "SELECT flow_id FROM review_outcomes WHERE flow_id = ANY(%s)",
                    (ids, ids),
                ).fetchall()
                if there is not None
                else []
            )
        missing = sorted(set(ids) - {row[0] for row in known})
        if not dry_run:
            for flow_id in missing:
                publish(fleet, project, store.flow(flow_id), refresh=False)
        return missing
    finally:
        store.close()


def published(fleet: FleetStore, flow_id: str) -> PublishedFlow | None:
    """The published flow named by ``flow_id`` (a unique prefix is enough)."""
    with fleet.connection() as con:
        rows = con.execute(
            "SELECT flow_id, agent, host, events, digest, created_at, ttl_s FROM review_pending"
            " WHERE flow_id = %s OR starts_with(flow_id, %s) ORDER BY flow_id LIMIT 6",
            (flow_id, flow_id),
        ).fetchall()
    exact = [r for r in rows if r[0] == flow_id]
    if len(rows) > 1 and not exact:
        raise UsageError(
            f"flow id prefix {flow_id!r} is ambiguous ({', '.join(r[0] for r in rows[:5])})",
            hint="give more characters of the flow id",
        )
    row = (exact or rows or [None])[0]
    return PublishedFlow(*row) if row is not None else None


def fleet_waiting(fleet: FleetStore, *, agent: str | None = None) -> list[PublishedFlow]:
    """Every published flow with no outcome yet, oldest first, from every host."""
    with fleet.connection() as con:
        rows = con.execute(
            "SELECT p.flow_id, p.agent, p.host, p.events, p.digest, p.created_at, p.ttl_s"
            " FROM review_pending p WHERE NOT EXISTS (SELECT 1 FROM review_outcomes o"
            " WHERE o.flow_id = p.flow_id) AND (%s::text IS NULL OR p.agent = %s)"
            " ORDER BY p.created_at, p.flow_id",
            (agent, agent),
        ).fetchall()
    return [PublishedFlow(*row) for row in rows]


def verified_events(flow: PublishedFlow) -> list[TraceEvent]:
    """The published events, once their digest matches (else a refusal, nothing runs)."""
    if digest_of(flow.events) != flow.digest:
        raise UsageError(
            f"flow {flow.flow_id}: its published events do not match their digest",
            hint="the fleet store was edited; the flow is not decided from it",
        )
    return [TraceEvent.model_validate(e) for e in flow.events]


def lock_key(flow_id: str) -> int:
    digest = hashlib.sha256(f"mir-review:{flow_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def flow_lock(fleet: FleetStore, flow_id: str) -> Iterator[Any]:
    """This flow's lock across hosts: a session advisory lock, held on one connection."""
    with fleet.connection() as con:
        con.execute("SELECT pg_advisory_lock(%s)", (lock_key(flow_id),))
        try:
            yield con
        finally:
            con.execute("SELECT pg_advisory_unlock(%s)", (lock_key(flow_id),))


def _clear_dead_claim(con: Any, fleet: FleetStore, flow_id: str) -> None:
    """Remove an outcome claim left unsettled by a review whose process died (its
    liveness lock is gone, on whatever host) before any execution was claimed for the
    flow: nothing ran, so the flow waits again. One whose process lives, one from before
    claims had a token, or one with an execution claimed (it may have run) stays: fail
    closed. Called under the flow's lock."""
    row = con.execute(
        "SELECT live FROM review_outcomes WHERE flow_id = %s AND status IS NULL", (flow_id,)
    ).fetchone()
    if row is None or row[0] is None or fleet.is_alive(row[0]):
        return
    if con.execute("SELECT to_regclass('executions')").fetchone()[0] is not None:
        ran = con.execute(
            "SELECT 1 FROM executions WHERE (info::jsonb) ->> 'flow_id' = %s LIMIT 1",
            (flow_id,),
        ).fetchone()
        if ran is not None:
            return
    con.execute("DELETE FROM review_outcomes WHERE flow_id = %s AND status IS NULL", (flow_id,))


def _refuse_decided(con: Any, flow_id: str) -> None:
    row = con.execute(
        "SELECT status, verdict, by, host, at FROM review_outcomes WHERE flow_id = %s",
        (flow_id,),
    ).fetchone()
    if row is None:
        return
    status, verdict, by, host, at = row
    when = at.isoformat(timespec="seconds") if isinstance(at, datetime) else str(at)
    if status is None:  # claimed and never settled: its process died mid-decision
        raise FlowAlreadyDecided(
            flow_id, f"being {verdict}d", f"{by} on {host}", when,
            hint="its process stopped before the outcome was recorded: see its host's traces",
        )  # fmt: skip
    raise FlowAlreadyDecided(flow_id, str(status), f"{by} on {host}", when)


def _catch_up(store: Any, fleet: FleetStore, flow_id: str) -> None:
    """A flow this host holds gets the events other hosts published since (their partial
    approvals of a ``count: N`` action), so they count here too. Only when this host's
    events are where the published ones start; a host ahead of what it published keeps
    its own (its next publish is the newer one). A published copy that fails its digest
    is ignored here: the holder decides from its own events, never from an edited copy."""
    remote = published(fleet, flow_id)
    if remote is None:
        return
    try:
        theirs = sorted(verified_events(remote), key=lambda e: e.seq)
    except UsageError:  # an edited copy counts nothing: this host's own events decide
        return
    mine = [e.event_id for e in sorted(store.flow(flow_id), key=lambda e: e.seq)]
    if len(theirs) > len(mine) and [e.event_id for e in theirs[: len(mine)]] == mine:
        store.append(theirs[len(mine) :])


def resume_in_fleet(
    fleet: FleetStore,
    flow_id: str,
    verdict: str,
    *,
    project: Project,
    store: Any,
    by: str,
    local_id: Callable[[str], str],
    decide: Callable[[str], DecisionRecord],
) -> DecisionRecord:
    """``decide(flow_id)`` (the local resume) under the flow's lock across hosts, with
    one outcome row per flow; a flow this host does not hold is copied in first."""
    flow_id = local_id(flow_id)
    local = bool(store.flow(flow_id))
    remote = None if local else published(fleet, flow_id)
    if remote is not None:
        flow_id = remote.flow_id
    with flow_lock(fleet, flow_id) as con:
        _clear_dead_claim(con, fleet, flow_id)
        _refuse_decided(con, flow_id)
        if not local and remote is not None and not store.flow(flow_id):
            # read again under the lock: an approval that finished while this one waited
            # for it republished the flow, and the copy must count it
            store.append(verified_events(published(fleet, flow_id) or remote))
        elif local:
            _catch_up(store, fleet, flow_id)
        claimed = con.execute(
            "INSERT INTO review_outcomes (flow_id, verdict, by, host, live)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (flow_id) DO NOTHING RETURNING flow_id",
            (flow_id, verdict, by, host_name(project), fleet.hold_liveness()),
        ).fetchone()
        if claimed is None:
            _refuse_decided(con, flow_id)
        try:
            record = decide(flow_id)
        except UsageError:  # refused before anything was written or claimed
            con.execute("DELETE FROM review_outcomes WHERE flow_id = %s", (flow_id,))
            raise
        if record.status == "pending_review":  # an approval short of the count needed
            con.execute("DELETE FROM review_outcomes WHERE flow_id = %s", (flow_id,))
            publish(fleet, project, store.flow(flow_id))
            return record
        con.execute(
            "UPDATE review_outcomes SET status = %s, by = %s, settled_at = now()"
            " WHERE flow_id = %s",
            (record.status, record.reviewed_by or by, flow_id),
        )
        return record


def expire_in_fleet(
    fleet: FleetStore,
    project: Project,
    flows: Sequence[PublishedFlow],
    *,
    store: Any,
    expire_local: Callable[[list[str]], list[str]],
) -> list[str]:
    """Close ``flows`` (past their TTL) as ``expired``, one outcome each: those held here
    are closed in this host's traces too; returns the ids this call closed."""
    closed: list[str] = []
    for flow in flows:
        with flow_lock(fleet, flow.flow_id) as con:
            _clear_dead_claim(con, fleet, flow.flow_id)
            won = con.execute(
                "INSERT INTO review_outcomes (flow_id, verdict, status, by, host, settled_at)"
                " VALUES (%s, 'expire', 'expired', 'ttl', %s, now())"
                " ON CONFLICT (flow_id) DO NOTHING RETURNING flow_id",
                (flow.flow_id, host_name(project)),
            ).fetchone()
            if won is None:
                continue
            if store.flow(flow.flow_id):
                expire_local([flow.flow_id])
            closed.append(flow.flow_id)
    return closed


def fleet_due(flow: PublishedFlow, now: datetime) -> bool:
    if flow.ttl_s is None:
        return False
    created = flow.created_at if flow.created_at.tzinfo else flow.created_at.replace(tzinfo=UTC)
    return (now - created).total_seconds() >= flow.ttl_s
