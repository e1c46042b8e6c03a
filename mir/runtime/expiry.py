"""Closing a flow that waited for review past its TTL: status ``expired``, never executed.

A pending flow's decision is valid for the contract's ``ttl_seconds`` from its snapshot's
``created_at`` (the TTL stored in the snapshot: a later, longer TTL in an edited contract
does not revive it). Past that, an approval could only end ``stale`` / ``ttl_expired``;
expiring it says so without anyone having to try, and takes it off the review queue.

One outcome per flow: the expiry takes the flow's review lock (``resuming.flow_lock``, so
no partial M-of-N approval writes an event beside it) and claims the flow in the ledger
exactly as ``approve`` and ``reject`` do (first writer wins). The loser of a race does
nothing: an approval that claimed first proceeds (its own TTL check decides), and one
that comes after is told the flow is already ``expired``. The flow is closed by one
``final`` event (status ``expired``, the pending reasons plus ``ttl_expired``, the
decision that waited, and ``data.expired``: when, under which TTL); the claim is settled
only once it is on disk. Nothing is re-checked or executed, so no user code (executors,
loaders) is imported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mir.contracts import load_contract
from mir.errors import MirUserError
from mir.project import Project, find_project
from mir.runtime.ports import ExecutionLedger, TraceSink
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.runtime.resuming import flow_lock
from mir.runtime.review import StoredFlow, read_flow
from mir.runtime.stores import project_ledger
from mir.traces import TraceEvent, TraceStore

EXPIRED_BY = "expiry"  # the holder name a reviewer who loses the race is told
BATCH = 200  # flows locked and read together


@dataclass(frozen=True)
class Expiry:
    """What an expiry pass did: the records of the flows it closed, and the flows it
    left alone because someone else held them (an approval or rejection under way)."""

    closed: tuple[DecisionRecord, ...] = ()
    held: tuple[str, ...] = ()


def expires_at(flow: StoredFlow) -> datetime | None:
    ttl = flow.state.ttl_seconds
    if ttl is None:
        return None
    created = flow.state.created_at
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created + timedelta(seconds=ttl)


def expire_flows(
    flow_ids: Sequence[str],
    *,
    project: Project | str | Path | None = None,
    traces: TraceSink | None = None,
    now: datetime | None = None,
) -> Expiry:
    """Close every flow of ``flow_ids`` that is still pending review and past its TTL.

    Flows go in batches: every flow of a batch is locked (in id order, so two expiries
    never wait on each other), then their events are read in one query (fresh: nobody
    may write to a locked flow), then each is claimed and closed."""
    proj = project if isinstance(project, Project) else find_project(_path(project))
    store = traces if traces is not None else TraceStore.for_project(proj)
    ledger = project_ledger(proj, store)
    closed: list[DecisionRecord] = []
    held: list[str] = []
    when = now or datetime.now(UTC)
    ids = sorted(set(flow_ids))
    try:
        for start in range(0, len(ids), BATCH):
            batch = ids[start : start + BATCH]
            with ExitStack() as locks:
                for flow_id in batch:
                    locks.enter_context(flow_lock(proj.state_dir, flow_id))
                found = _events_of(store, batch)
                for flow_id in batch:
                    outcome = expire_flow(
                        flow_id, found.get(flow_id, []), store, ledger, proj.root, when
                    )
                    if isinstance(outcome, DecisionRecord):
                        closed.append(outcome)
                    elif outcome == "held":
                        held.append(flow_id)
    finally:
        ledger.close()
        if traces is None:
            store.close()  # type: ignore[attr-defined]
    order = {flow_id: n for n, flow_id in enumerate(flow_ids)}
    closed.sort(key=lambda record: order.get(record.flow_id, 0))
    return Expiry(tuple(closed), tuple(held))


def expire_flow(
    flow_id: str,
    events: Sequence[TraceEvent],
    store: TraceSink,
    ledger: ExecutionLedger,
    root: Path,
    now: datetime,
) -> DecisionRecord | str:
    """The flow's ``expired`` record, or why not: ``"not_pending"``, ``"not_due"``,
    ``"held"`` (another holder has its outcome). The caller holds the flow's lock and
    read ``events`` under it."""
    found = _pending(flow_id, events)
    if found is None:
        return "not_pending"
    flow, source = found
    due = expires_at(flow)
    if due is None or now < due:
        return "not_due"
    claim = ledger.claim_flow(flow_id, "expired", by=EXPIRED_BY)
    if not claim.won:
        return "held"
    if claim.holder is not None:  # took over a dead process's claim: what did it leave?
        events = store.flow(flow_id)
        again = _pending(flow_id, events)
        if again is None:
            status = next((e.status for e in reversed(events) if e.step == "final"), None)
            if status is not None:
                ledger.settle_flow(flow_id, status)
            else:
                ledger.release_flow(flow_id)
            return "not_pending"
        flow, source = again
    record = _close(flow, source, store, root, now, due)
    ledger.settle_flow(flow_id, "expired")  # only now: the final event is on disk
    return record


_COLUMNS = (
    "event_id, flow_id, seq, step, agent, status, reasons, provider, model, prompt_hash, "
    "prompt_version, prompt_tokens, completion_tokens, cost_usd, latency_ms, data"
)


def _events_of(store: TraceSink, flow_ids: Sequence[str]) -> dict[str, list[TraceEvent]]:
    """The events of ``flow_ids``: one query on a trace store, else one read a flow."""
    analysis = getattr(store, "analysis", None)
    if analysis is None:
        return {flow_id: list(store.flow(flow_id)) for flow_id in flow_ids}
    found: dict[str, list[TraceEvent]] = {}
    broken: set[str] = set()
    names = [c.strip() for c in _COLUMNS.split(",")]
    with analysis() as (con, events, _):
        rows = con.execute(
            f'SELECT {_COLUMNS}, epoch_us("at") FROM ({events("list_contains($ids, flow_id)")}) '
            "ORDER BY flow_id, seq",
            {"ids": list(flow_ids)},
        ).fetchall()
    for row in rows:
        fields = dict(zip(names, row[:-1], strict=True))
        try:
            fields["data"] = json.loads(fields["data"]) if fields["data"] else {}
            fields["at"] = datetime.fromtimestamp(row[-1] / 1e6, UTC)
            event = TraceEvent.model_validate(fields)
        except (ValueError, TypeError):  # an edited line: the flow is not read at all
            broken.add(fields["flow_id"])
            continue
        found.setdefault(event.flow_id, []).append(event)
    return {flow_id: evs for flow_id, evs in found.items() if flow_id not in broken}


def _pending(flow_id: str, events: Sequence[TraceEvent]) -> tuple[StoredFlow, str] | None:
    """The flow and its source, when it waits for review (eval and shadow flows never
    wait: their decisions never execute)."""
    if not events:
        return None
    try:
        flow = read_flow(flow_id, events)
    except (MirUserError, KeyError, TypeError, ValueError):
        return None  # no snapshot, or one edited past reading: nothing a resume could use
    source = next((e.data.get("source") for e in events if e.step == "snapshot"), None)
    if flow.phase != "pending" or flow.decision is None or source in ("eval", "shadow"):
        return None
    return flow, "replay" if source == "replay" else "production"


def _close(
    flow: StoredFlow, source: str, store: TraceSink, root: Path, now: datetime, due: datetime
) -> DecisionRecord:
    decision: dict[str, Any] = dict(flow.decision or {})
    action_field = _action_field(flow.contract_path, root)
    action = decision.get(action_field)
    record = DecisionRecord(
        flow_id=flow.flow_id,
        agent=flow.agent,
        status="expired",
        decision=decision,
        action=action if isinstance(action, str) else None,
        executed=False,
        reasons=list(dict.fromkeys([*flow.reasons, ReasonCode.TTL_EXPIRED.value])),
        provider=flow.state.provider,
        model=flow.state.model,
        tokens=flow.state.tokens,
    )
    rec = FlowRecorder(store, flow.flow_id, flow.agent, next_seq=flow.next_seq)
    rec.emit(
        "final",
        at=now,
        status="expired",
        reasons=record.reasons,
        provider=record.provider,
        model=record.model,
        data={
            "record": record.model_dump(),
            "source": source,
            "contract_hash": flow.contract_hash,
            "prompt_hashes": list(flow.state.prompt_hashes),
            "expired": {
                "at": now.isoformat(),
                "expires_at": due.isoformat(),
                "ttl_seconds": flow.state.ttl_seconds,
                "by": EXPIRED_BY,
            },
        },
    )
    rec.flush()
    return record


def _action_field(contract_path: str, root: Path) -> str:
    """The contract's action field (a contract that no longer loads: the default)."""
    path = Path(contract_path)
    try:
        return load_contract(path if path.is_absolute() else root / path).decision.action_field
    except (MirUserError, OSError):
        return "action"


def _path(project: str | Path | None) -> Path | None:
    return Path(project) if project is not None else None
