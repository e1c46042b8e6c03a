"""Pending reviews across hosts: the fleet store's three steps against the local ones.

For ``--flows`` waiting flows (a snapshot, two infer events and a pending route event
each, as a paused decision writes them), one process, same run, p50 of each step:

* publish: ``fleet_reviews.publish`` (one upsert of the flow's events and digest into
  Postgres) against the local write of the same events (``TraceStore.append``);
* verified read: ``published`` + ``verified_events`` (read by id, digest checked)
  against ``TraceStore.flow(flow_id, verify=True)`` (segments re-hashed);
* lock: the flow's advisory lock taken and released on a pooled connection against
  the local ``flock`` of ``<state_dir>/reviews/<h>.lock``;
* catch-up: ``publish_waiting`` with every waiting flow already published (what each
  read of the queue in fleet mode adds: the local listing of waiting flows, one query
  of which the fleet holds) against that local listing alone.

The Postgres is the tests' embedded server (Unix socket), started by this script.

    python bench/fleet_reviews.py [--flows 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mir.project import find_project  # noqa: E402
from mir.runtime.fleet_reviews import (  # noqa: E402
    fleet_of,
    flow_lock,
    publish,
    publish_waiting,
    published,
    verified_events,
)
from mir.runtime.resuming import flow_lock as local_lock  # noqa: E402
from mir.traces import TraceEvent, TraceStore  # noqa: E402
from tests.support.postgres import PgServer  # noqa: E402

PROJECT = ROOT / "tests" / "fixtures" / "runtime" / "project"


def _flow() -> list[TraceEvent]:
    flow_id, agent = uuid.uuid4().hex, "refunds.triage"
    snap = {
        "created_at": datetime.now(UTC).isoformat(), "ttl_seconds": 300, "role": "agent",
        "input": {"order_id": "A1", "amount": 40, "message": "arrived broken " * 8},
        "context": {"order_total": 80}, "contract": "capabilities/refunds/agents/triage.yaml",
    }  # fmt: skip
    decision = {"action": "refund", "amount": 40, "confidence": 0.3, "reason": "broken"}
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent=agent, data=snap),
        TraceEvent(flow_id=flow_id, seq=1, step="infer", agent=agent, data={"raw": "x" * 300}),
        TraceEvent(flow_id=flow_id, seq=2, step="infer", agent=agent, data={"raw": "y" * 300}),
        TraceEvent(
            flow_id=flow_id, seq=3, step="route", agent=agent, status="pending_review",
            data={"decision": decision, "status_ok": "executed", "reasons": ["low_confidence"]},
        ),
    ]  # fmt: skip


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=300)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mirbench-"))
    server = PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))
    db = server.create_database()
    os.environ["MIR_STORE_URL"] = server.url(db)
    shutil.copytree(PROJECT, work / "app")
    project = find_project(work / "app")
    fleet = fleet_of(project)
    assert fleet is not None
    store = TraceStore.for_project(project)
    flows = [_flow() for _ in range(args.flows)]
    times: dict[str, list[float]] = {
        k: [] for k in ("pub", "app", "read", "vread", "pg", "fl", "catch", "list")
    }

    def timed(key: str, fn, *args) -> None:
        started = time.perf_counter()
        fn(*args)
        times[key].append(time.perf_counter() - started)

    def pg_lock(fid: str) -> None:
        with flow_lock(fleet, fid):
            pass

    def file_lock(fid: str) -> None:
        with local_lock(project.state_dir, fid):
            pass

    def fleet_read(fid: str) -> None:
        verified_events(published(fleet, fid))  # type: ignore[arg-type]

    try:
        for events in flows:
            timed("app", store.append, events)
            timed("pub", publish, fleet, project, events)
        for events in flows:
            fid = events[0].flow_id
            timed("vread", lambda f: store.flow(f, verify=True), fid)
            timed("read", fleet_read, fid)
            timed("pg", pg_lock, fid)
            timed("fl", file_lock, fid)
        for _ in range(20):
            timed("catch", publish_waiting, project)
            timed("list", lambda: store.list_flows(status="pending_review", limit=10**6))
    finally:
        store.close()
        fleet.close()
        server.drop_database(db)
    rows = [
        ("publish a waiting flow", "pub", "app", "TraceStore.append"),
        ("verified read of a flow", "read", "vread", "flow(verify=True)"),
        ("flow lock taken + released", "pg", "fl", "flock"),
        ("catch-up check (per read)", "catch", "list", "list_flows(pending_review)"),
    ]
    print(f"{args.flows} flows, p50 per step (ms)")
    print(f"{'step':<28} {'fleet':>8} {'local':>8} {'ratio':>7}  local reference")
    for label, fleet_key, local_key, ref in rows:
        f, loc = _p50(times[fleet_key]), _p50(times[local_key])
        print(f"{label:<28} {f:>8.3f} {loc:>8.3f} {f / loc:>6.2f}x  {ref}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
