"""The review queue read from a real trace store: which flows wait, oldest first, with
their key fields; expiry past the TTL closes them (traced, never executed, one outcome)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.project import find_project
from mir.reviews import pending_page
from mir.runtime import approve, load_agent
from mir.runtime.ports import FlowAlreadyDecided
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
LOW = {"action": "refund", "confidence": 0.3, "amount": 40, "reason": "arrived broken"}
HIGH = {**LOW, "confidence": 0.95}
TICKET = {"order_id": "A1", "amount": 40, "message": "arrived broken"}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def decide(root: Path, *outputs: dict) -> list[str]:
    """One flow per output (both routes of the fixture answer it: a low confidence
    cascades to the second route)."""
    script = root / "responses.jsonl"
    ids = []
    for output in outputs:
        script.write_text(json.dumps(json.dumps(output)) + "\n")
        with load_agent(
            "refunds.triage", project=root, provider="scripted", responses=script
        ) as agent:
            ids.append(agent.decide(TICKET).flow_id)
    return ids


def finals(root: Path, flow_id: str) -> list:
    with TraceStore.for_project(find_project(root)) as store:
        return [e for e in store.flow(flow_id) if e.step == "final"]


def executed(root: Path) -> list[dict]:
    log = root / "executed.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_pending_flows_are_listed_oldest_first_with_their_key_fields(app: Path):
    first, done, second = decide(app, LOW, HIGH, {**LOW, "amount": 12})
    page = pending_page(app)
    assert page.total == 2 and [i.flow_id for i in page.items] == [first, second]
    item = page.items[0]
    assert item.agent == "refunds.triage" and item.action == "refund"
    assert item.fields == {"amount": 40, "reason": "arrived broken", "confidence": 0.3}
    assert item.confidence == 0.3 and item.reasons[-1] == "low_confidence"
    assert item.waits_for == "review" and item.ttl_s == 300
    assert item.expires_at == item.created_at + timedelta(seconds=300)
    assert item.input == TICKET and item.context == {"order_total": 80}
    assert page.items[1].fields["amount"] == 12
    # pagination and the agent filter (its short name too)
    assert [i.flow_id for i in pending_page(app, offset=1, limit=1).items] == [second]
    assert pending_page(app, agent="triage").total == 2
    with pytest.raises(UsageError):
        pending_page(app, agent="nobody")
    with pytest.raises(UsageError):
        pending_page(app, limit=0)
    # an approved flow leaves the queue
    approve(first, project=app, by="ana")
    assert [i.flow_id for i in pending_page(app).items] == [second]
    assert done not in {i.flow_id for i in pending_page(app).items}


def test_a_flow_past_its_ttl_is_closed_as_expired_and_never_executed(app: Path):
    [flow_id] = decide(app, LOW)
    created = pending_page(app).items[0].created_at
    early = pending_page(app, now=created + timedelta(seconds=299))
    assert early.total == 1 and early.expired == []
    later = pending_page(app, now=created + timedelta(seconds=301))
    assert later.total == 0 and later.items == [] and later.expired == [flow_id]
    [final] = finals(app, flow_id)
    assert final.status == "expired"
    assert final.reasons[-2:] == ("low_confidence", "ttl_expired")
    assert final.data["record"]["executed"] is False
    assert final.data["record"]["decision"] == LOW
    assert final.data["source"] == "replay"  # a scripted run is a replay, and stays one
    assert final.data["expired"]["ttl_seconds"] == 300
    # read again: nothing more is written; an approval is told the truth
    assert pending_page(app, now=created + timedelta(seconds=900)).expired == []
    with pytest.raises(FlowAlreadyDecided, match="already expired"):
        approve(flow_id, project=app, by="ana")
    assert len(finals(app, flow_id)) == 1 and executed(app) == []


def test_the_queue_of_an_empty_project_is_empty(app: Path):
    page = pending_page(app, now=datetime.now(UTC))
    assert page.total == 0 and page.items == []


def _race(app: Path, flow_id: str, later: datetime) -> dict[str, object]:
    """``approve`` and ``expire_flows`` on two threads released at the same instant."""
    import threading

    from mir.runtime import expire_flows

    start = threading.Barrier(2)
    results: dict[str, object] = {}

    def approving() -> None:
        start.wait()
        try:
            results["approve"] = approve(flow_id, project=app, by="ana").status
        except FlowAlreadyDecided as exc:
            results["approve"] = exc

    def expiring() -> None:
        start.wait()
        results["expire"] = expire_flows([flow_id], project=app, now=later)

    threads = [threading.Thread(target=approving), threading.Thread(target=expiring)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_threads_racing_an_approval_and_an_expiry_leave_one_outcome(app: Path):
    outcomes = []
    for _ in range(5):
        [flow_id] = decide(app, LOW)
        later = pending_page(app).items[0].created_at + timedelta(seconds=301)
        results = _race(app, flow_id, later)
        [final] = finals(app, flow_id)
        expiry = results["expire"]
        if final.status == "expired":
            assert isinstance(results["approve"], FlowAlreadyDecided)
            assert [r.flow_id for r in expiry.closed] == [flow_id]  # type: ignore[attr-defined]
        else:
            assert final.status == results["approve"] == "executed"
            assert expiry.closed == ()  # type: ignore[attr-defined]
        outcomes.append(final.status)
    assert len(executed(app)) == outcomes.count("executed")


def test_hand_written_and_damaged_flows_never_break_the_queue(app: Path):
    from mir.traces import TraceEvent

    [real] = decide(app, LOW)
    old = "2020-01-01T00:00:00+00:00"
    events = [
        # a pending route event with no snapshot: nothing to resume, never listed
        TraceEvent(flow_id="f" * 32, seq=0, step="route", agent="refunds.triage",
                   status="pending_review", data={"decision": LOW}),
        # a snapshot edited past reading: no created_at, a TTL that is no number,
        # a decision that is no object; twice
        *[TraceEvent(flow_id="e" * 32, seq=0, step="snapshot", agent="refunds.triage",
                     data={"ttl_seconds": "soon", "input": "x", "context": [1]})
          for _ in range(2)],
        TraceEvent(flow_id="e" * 32, seq=1, step="route", agent="refunds.triage",
                   status="pending_review", data={"decision": "refund it", "reasons": 7}),
        # long expired, with an odd role: closed as expired like any other
        TraceEvent(flow_id="d" * 32, seq=0, step="snapshot", agent="refunds.triage",
                   data={"ttl_seconds": 1, "created_at": old, "role": 5}),
        TraceEvent(flow_id="d" * 32, seq=1, step="route", agent="refunds.triage",
                   status="pending_review", data={"decision": LOW}),
    ]  # fmt: skip
    with TraceStore.for_project(find_project(app)) as store:
        store.append(events)
    page = pending_page(app)
    listed = {item.flow_id: item for item in page.items}
    assert "f" * 32 not in listed and real in listed
    damaged = listed["e" * 32]
    assert damaged.decision == {} and damaged.reasons == [] and damaged.ttl_s is None
    assert page.expired == ["d" * 32] and "d" * 32 not in listed
    assert page.total == len(page.items) == 2
    assert executed(app) == []


def test_a_read_closes_a_bounded_batch_and_never_lists_the_rest(app: Path):
    flows = decide(app, *[LOW] * 5)
    later = pending_page(app).items[-1].created_at + timedelta(seconds=301)
    first = pending_page(app, now=later, expire_at_most=2)
    assert first.expired == flows[:2] and first.still_due == 3  # the oldest first
    assert first.total == 0 and first.items == []
    rest = pending_page(app, now=later, expire_at_most=100)
    assert rest.expired == flows[2:] and rest.still_due == 0
    assert all(finals(app, f)[0].status == "expired" for f in flows)


def test_review_expire_closes_every_batch(app: Path, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from mir.cli.app import build_app
    from mir.reviews import sweep

    flows = decide(app, *[LOW] * 5)
    later = pending_page(app).items[-1].created_at + timedelta(seconds=301)
    monkeypatch.setattr(sweep, "EXPIRE_BATCH", 2)  # three passes for five flows
    import mir.reviews.queue as queue

    real = queue.pending_page
    monkeypatch.setattr(
        "mir.reviews.queue.pending_page", lambda *a, **k: real(*a, **{**k, "now": later})
    )
    result = CliRunner().invoke(
        build_app(), ["review", "expire", "--json", "--project", str(app)], env={"COLUMNS": "100"}
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"expired": flows, "pending": 0}
