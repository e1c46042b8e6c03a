"""Counting from trace events: TraceEvents fed to the observer, the registry read back."""

from __future__ import annotations

import pytest

from mir.metrics import Counting, parse_address
from mir.traces import TraceEvent

prometheus_client = pytest.importorskip("prometheus_client")
LABELS = {"agent", "status", "action", "source", "step", "le"}


def _ev(flow: str, seq: int, step: str, **fields) -> TraceEvent:
    return TraceEvent(
        flow_id=flow, seq=seq, step=step, agent=fields.pop("agent", "refunds.triage"), **fields
    )


def _flow(
    flow: str, *, source: str = "production", action: str = "refund", status: str = "executed"
) -> list[TraceEvent]:
    return [
        _ev(flow, 0, "snapshot", data={"source": source, "input": {"email": "ana@example.com"}}),
        _ev(flow, 1, "infer", latency_ms=250.0, data={"decision": {"action": action}}),
        _ev(
            flow,
            2,
            "final",
            status=status,
            latency_ms=40.0,
            data={
                "record": {"action": action, "latency_ms": 300.0},
                "source": source,
            },
        ),
    ]


@pytest.fixture
def counting():
    registry = prometheus_client.CollectorRegistry()
    return Counting(registry), registry


def value(registry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_final_events_count_decisions_by_status_action_and_source(counting):
    count, registry = counting
    count(_flow("f1"))
    count(_flow("f2", action="reject", status="fallback"))
    count(_flow("f3", source="eval"))
    count([*_flow("f4"), *_flow("f5")])  # one append of two flows
    production = {"agent": "refunds.triage", "source": "production"}
    assert (
        value(registry, "mir_decisions_total", **production, status="executed", action="refund")
        == 3
    )
    assert (
        value(registry, "mir_decisions_total", **production, status="fallback", action="reject")
        == 1
    )
    # eval runs never land in production's figures
    assert (
        value(
            registry,
            "mir_decisions_total",
            agent="refunds.triage",
            source="eval",
            status="executed",
            action="refund",
        )
        == 1
    )


def test_step_latencies_carry_the_flows_source_from_its_snapshot(counting):
    count, registry = counting
    count(_flow("f1", source="shadow")[:2])  # snapshot and model call: written first
    count(_flow("f1", source="shadow")[2:])
    shadow = {"agent": "refunds.triage", "source": "shadow"}
    assert value(registry, "mir_step_latency_seconds_count", **shadow, step="infer") == 1
    assert value(registry, "mir_step_latency_seconds_sum", **shadow, step="infer") == 0.25
    assert value(registry, "mir_step_latency_seconds_count", **shadow, step="final") == 1
    assert value(registry, "mir_decision_latency_seconds_sum", **shadow) == 0.3
    assert value(registry, "mir_step_latency_seconds_count", **shadow, step="snapshot") == 0


def test_shed_calls_are_counted_and_deadline_ones_apart(counting):
    count, registry = counting
    count([_ev("f1", 0, "snapshot", data={"source": "production"})])
    count(
        [
            _ev(
                "f1",
                1,
                "infer",
                reasons=("shed",),
                data={"error": "shed: the model's queue is full (4 waiting)"},
            ),
            _ev(
                "f1",
                2,
                "infer",
                reasons=("shed",),
                data={"error": "shed: the deadline passed while queued"},
            ),
            _ev(
                "f1",
                3,
                "infer",
                reasons=("shed",),
                data={"error": "shed: estimated wait 900 ms exceeds the 200 ms left"},
            ),
            _ev(
                "f1",
                4,
                "infer",
                reasons=("provider_error",),
                data={"error": "deadline of the network"},
            ),
        ]
    )
    labels = {"agent": "refunds.triage", "source": "production"}
    assert value(registry, "mir_shed_total", **labels) == 3
    assert value(registry, "mir_deadline_shed_total", **labels) == 2


def test_review_requests_and_drift_suspensions(counting):
    count, registry = counting
    count([_ev("f1", 0, "snapshot", data={"source": "replay"})])
    count([_ev("f1", 1, "route", status="pending_review", reasons=("low_confidence",))])
    suspended = _ev(
        "s1",
        0,
        "route",
        reasons=("agent_suspended",),
        data={"event": "agent_suspended", "by": "mir drift", "reason": "drift: x"},
    )
    count([suspended])
    # a decision taken by the rules while suspended is no new suspension
    count(
        [
            _ev(
                "f2",
                0,
                "final",
                status="fallback",
                reasons=("agent_suspended",),
                data={"record": {"action": "escalate"}},
            )
        ]
    )
    assert (
        value(registry, "mir_review_requests_total", agent="refunds.triage", source="replay") == 1
    )
    assert value(registry, "mir_suspensions_total", agent="refunds.triage") == 1
    assert (
        value(
            registry,
            "mir_decisions_total",
            agent="refunds.triage",
            source="production",
            status="fallback",
            action="escalate",
        )
        == 1
    )


def test_no_input_value_or_secret_ever_becomes_a_label_or_a_value(counting):
    count, registry = counting
    secret = "sk-live-0123456789abcdef"
    events = [
        *_flow("f1", action="refund ana@example.com"),
        _ev(
            "f2",
            0,
            "final",
            status="executed",
            agent="x y <script>",
            data={
                "record": {"action": secret + "/x", "decision": {"card": "4111111111111111"}},
                "source": "production; drop",
                "error": secret,
            },
        ),
    ]
    count(events)
    text = prometheus_client.generate_latest(registry).decode()
    for leaked in ("ana@example.com", "sk-live", "4111", "script", "drop"):
        assert leaked not in text
    names = {
        label
        for family in registry.collect()
        for sample in family.samples
        for label in sample.labels
    }
    assert names <= LABELS, names
    assert (
        value(
            registry,
            "mir_decisions_total",
            agent="refunds.triage",
            source="production",
            status="executed",
            action="other",
        )
        == 1
    )
    assert (
        value(
            registry,
            "mir_decisions_total",
            agent="other",
            source="other",
            status="executed",
            action="other",
        )
        == 1
    )


def test_odd_event_data_counts_what_it_can_and_never_raises(counting):
    count, registry = counting
    count(
        [
            _ev("f1", 0, "final", status="aborted", data={"record": "not a mapping"}),
            _ev("f2", 0, "final", status="executed", data={"record": {"latency_ms": "slow"}}),
            _ev("f3", 0, "snapshot", data={"source": ["eval"]}),
        ]
    )
    assert (
        value(
            registry,
            "mir_decisions_total",
            agent="refunds.triage",
            source="production",
            status="aborted",
            action="none",
        )
        == 1
    )
    assert (
        value(
            registry,
            "mir_decision_latency_seconds_count",
            agent="refunds.triage",
            source="production",
        )
        == 0
    )


def test_the_label_sets_stay_bounded_whatever_the_events_name():
    """Past the per-agent cap a new action word is ``other``, past the agent cap a new
    agent is: no stream of events grows the label sets without end. Words already
    counted keep their labels after the cap is reached."""
    registry = prometheus_client.CollectorRegistry()
    count = Counting(registry, agents=3, actions=4)
    for i in range(10):
        count(_flow(f"a{i}", action=f"act_{i}"))
        final = {"record": {"action": "refund"}}
        count([_ev(f"g{i}", 0, "final", agent=f"agent_{i}", status="executed", data=final)])
    count(_flow("again", action="act_0"))
    decisions = {
        (sample.labels["agent"], sample.labels["action"]): sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == "mir_decisions_total"
    }
    triage = {action: n for (agent, action), n in decisions.items() if agent == "refunds.triage"}
    assert triage == {"act_0": 2, "act_1": 1, "act_2": 1, "act_3": 1, "other": 6}
    assert {agent for agent, _ in decisions} == {"refunds.triage", "agent_0", "agent_1", "other"}
    assert decisions[("other", "refund")] == 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9464", ("127.0.0.1", 9464)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9100", ("::1", 9100))],
)
def test_addresses(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "host:", "127.0.0.1:0", "127.0.0.1:70000", ":9464"])
def test_bad_addresses_are_usage_errors(text):
    from mir.errors import UsageError

    with pytest.raises(UsageError, match="--metrics"):
        parse_address(text)
