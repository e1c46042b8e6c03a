from datetime import UTC, datetime, timedelta

import pytest

from mir.errors import UsageError
from mir.traces import TraceEvent, find_flow, parse_since, verify_traces

from .conftest import decision_flow


class FakeReader:
    def __init__(self, flows: dict[str, list[TraceEvent]]):
        self.flows = flows

    def flow(self, flow_id: str) -> list[TraceEvent]:
        return self.flows.get(flow_id, [])

    def flow_ids(self, prefix: str, *, limit: int = 10) -> list[str]:
        return sorted(f for f in self.flows if f.startswith(prefix))[:limit]


READER = FakeReader({f: decision_flow(f) for f in ("abc123", "abd456", "x")})


def test_exact_id_and_unique_prefix_find_the_flow():
    assert find_flow(READER, "x")[0].flow_id == "x"
    assert find_flow(READER, "abc")[0].flow_id == "abc123"


def test_ambiguous_prefix_names_candidates():
    with pytest.raises(UsageError, match=r"ambiguous \(abc123, abd456\)"):
        find_flow(READER, "ab")


def test_unknown_flow_is_a_usage_error():
    with pytest.raises(UsageError, match="no flow 'zz'"):
        find_flow(READER, "zz")


def test_relative_and_absolute_since():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert parse_since("90m", now=now) == now - timedelta(minutes=90)
    assert parse_since("2d", now=now) == now - timedelta(days=2)
    assert parse_since("2026-11-30T10:00") == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def test_unreadable_since_is_a_usage_error():
    with pytest.raises(UsageError, match="--since"):
        parse_since("yesterday-ish")


def test_verify_of_an_empty_store_is_ok(tmp_path):
    from mir.traces import TraceStore

    report = verify_traces(TraceStore(tmp_path / "traces", environ={}))
    assert report.ok and report.lines == 0
    assert not (tmp_path / "traces").exists()  # reading creates nothing
