"""The fleet review tables on a real Postgres: publish and read back, what waits, one
outcome per flow, and the flow lock across connections."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from mir.errors import UsageError
from mir.project import find_project
from mir.runtime import fleet_due, fleet_of, fleet_waiting
from mir.runtime.fleet_reviews import (
    flow_lock,
    lock_key,
    publish,
    published,
    resume_in_fleet,
    verified_events,
)
from mir.runtime.ports import FlowAlreadyDecided
from mir.runtime.records import DecisionRecord
from mir.traces import TraceEvent, TraceStore

pytestmark = pytest.mark.fleet
PROJECT = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"


@pytest.fixture
def project(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "app"
    shutil.copytree(PROJECT, root)
    monkeypatch.setenv("MIR_STORE_URL", pg_url)
    return find_project(root)


def _events(flow_id: str, *, ttl: float = 300, ago: float = 0) -> list[TraceEvent]:
    created = (datetime.now(UTC) - timedelta(seconds=ago)).isoformat()
    data = {"created_at": created, "ttl_seconds": ttl, "input": {"order_id": "A1"}}
    route = {"decision": {"action": "refund", "amount": 40}, "status_ok": "executed"}
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent="refunds.triage", data=data),
        TraceEvent(
            flow_id=flow_id,
            seq=1,
            step="route",
            agent="refunds.triage",
            status="pending_review",
            data=route,
        ),
    ]


def test_a_published_flow_reads_back_verified_by_a_prefix(project) -> None:
    fleet = fleet_of(project)
    assert fleet is not None
    events = _events("f" * 32)
    publish(fleet, project, events)
    found = published(fleet, "ffff")
    assert found is not None and found.flow_id == "f" * 32 and found.ttl_s == 300
    assert [e.event_id for e in verified_events(found)] == [e.event_id for e in events]
    assert published(fleet, "0000") is None
    publish(fleet, project, _events("f" * 31 + "0"))
    with pytest.raises(UsageError, match="ambiguous"):
        published(fleet, "ffff")


def test_waiting_is_every_flow_without_an_outcome_and_due_is_past_its_ttl(project) -> None:
    fleet = fleet_of(project)
    assert fleet is not None
    publish(fleet, project, _events("a" * 32))
    publish(fleet, project, _events("b" * 32, ttl=1, ago=5))
    flows = fleet_waiting(fleet)
    assert [f.flow_id for f in flows] == ["b" * 32, "a" * 32]  # oldest first
    now = datetime.now(UTC)
    assert [fleet_due(f, now) for f in flows] == [True, False]
    with fleet.connection() as con:
        con.execute(
            "INSERT INTO review_outcomes (flow_id, verdict, status, by, host) "
            "VALUES (%s, 'reject', 'rejected', 'bo', 'h')",
            ("a" * 32,),
        )
        with pytest.raises(psycopg.errors.UniqueViolation):  # one outcome per flow
            con.execute(
                "INSERT INTO review_outcomes (flow_id, verdict, by, host) "
                "VALUES (%s, 'approve', 'ana', 'h')",
                ("a" * 32,),
            )
    assert [f.flow_id for f in fleet_waiting(fleet)] == ["b" * 32]


def test_one_outcome_a_refusal_leaves_none_and_the_loser_is_told(project) -> None:
    fleet = fleet_of(project)
    assert fleet is not None
    flow_id = "c" * 32
    store = TraceStore.for_project(project)
    calls: list[str] = []

    def refused(fid: str) -> DecisionRecord:
        calls.append(fid)
        raise UsageError("ana may not review it")

    def executed(fid: str) -> DecisionRecord:
        calls.append(fid)
        return DecisionRecord.model_construct(flow_id=fid, status="executed", reviewed_by="ana")

    try:
        publish(fleet, project, _events(flow_id))
        kw = {"project": project, "store": store, "by": "ana", "local_id": str}
        with pytest.raises(UsageError, match="may not"):
            resume_in_fleet(fleet, flow_id, "approve", decide=refused, **kw)
        assert [f.flow_id for f in fleet_waiting(fleet)] == [flow_id]  # still waits
        assert len(store.flow(flow_id)) == 2  # copied into this host's traces, verified
        record = resume_in_fleet(fleet, flow_id, "approve", decide=executed, **kw)
        assert record.status == "executed"
        with pytest.raises(FlowAlreadyDecided, match="already executed"):
            resume_in_fleet(fleet, flow_id, "reject", decide=executed, **kw)
        assert calls == [flow_id, flow_id]  # the loser ran nothing
        assert fleet_waiting(fleet) == []
    finally:
        store.close()


def test_the_flow_lock_excludes_every_other_session(project, pg_url: str) -> None:
    fleet = fleet_of(project)
    assert fleet is not None
    with psycopg.connect(pg_url, autocommit=True) as other:
        with flow_lock(fleet, "d" * 32):
            taken = other.execute("SELECT pg_try_advisory_lock(%s)", (lock_key("d" * 32),))
            assert taken.fetchone() == (False,)
        again = other.execute("SELECT pg_try_advisory_lock(%s)", (lock_key("d" * 32),))
        assert again.fetchone() == (True,)
