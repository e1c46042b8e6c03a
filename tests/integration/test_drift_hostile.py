"""`mir drift` over hostile stored decisions (an attack pass): final events whose
record holds strings where numbers belong, NaN / Infinity, huge ints, nested values,
control characters, null, no decision at all, negative latency / tokens, written through
the real ``TraceStore``. Drift never raises, its JSON stays strict, and a few bad rows
never hide the drift of the fields the normal decisions carry."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.drift import WindowOptions, measure
from mir.project import find_project
from mir.traces import TraceEvent, TraceStore
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
END = datetime(2026, 11, 1, tzinfo=UTC)
OPTIONS = WindowOptions(window="7d", reference="21d", now=END)
month = drift_month.load()

HOSTILE: list[Any] = [
    {"confidence": "high", "amount": "lots", "action": 5},
    {"confidence": float("nan"), "amount": float("inf")},
    {"confidence": float("-inf"), "amount": 10**40},
    {"confidence": {"a": [1, 2]}, "action": ["refund"], "category": {"x": 1}},
    {"category": "\x00\x1b[31m\u202eevil", "action": "re\nfund"},
    {},
    None,
    {"confidence": None, "action": None, "amount": None},
    "just a string",
    [1, 2, 3],
]


def _strict(text: str) -> Any:
    def reject(constant: str) -> Any:
        raise ValueError(f"non-finite number in JSON: {constant}")

    return json.loads(text, parse_constant=reject)


def desk(folder: Path) -> Path:
    root = folder / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return root


def final_flow(agent: str, at: datetime, record: Any, index: int) -> list[TraceEvent]:
    """A snapshot and a final event as hostile as the store accepts."""
    flow = f"hostile{index:025d}"
    return [
        TraceEvent(flow_id=flow, seq=0, step="snapshot", agent=agent, at=at, data={}),
        TraceEvent(
            flow_id=flow,
            seq=1,
            step="final",
            agent=agent,
            at=at + timedelta(seconds=1),
            status="executed",
            latency_ms=-3.0,
            cost_usd=-1.0,
            data={"record": record},
        ),
    ]


def hostile_flows(agent: str, count: int, seed: int = 1) -> list[TraceEvent]:
    rng = random.Random(seed)
    events: list[TraceEvent] = []
    for i in range(count):
        record: Any = {
            "decision": HOSTILE[i % len(HOSTILE)],
            "latency_ms": rng.choice([-5.0, float("nan"), "slow", None, 1e300]),
            "tokens": rng.choice([-10, 10**30, "many", None, float("inf")]),
        }
        if i % 7 == 0:
            record = None if i % 2 else "not a record"
        events += final_flow(agent, END - timedelta(days=rng.uniform(0.1, 27.9)), record, i)
    return events


def by_metric(root: Path) -> dict[str, tuple[int, int]]:
    report = measure(root, options=OPTIONS)
    _strict(report.model_dump_json())
    [agent] = [a for a in report.agents if a.agent == month.AGENT]
    return {m.metric: (m.reference_n, m.current_n) for m in agent.metrics if m.reference_n}


def test_a_few_hostile_decisions_do_not_hide_the_normal_fields_drift(tmp_path):
    # Before: one decision whose `amount` was a string dropped `field.amount.*` and the
    # limit-hugging rate; one whose `action` was a number dropped the action mix.
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=END, days=28, per_day=40, shift_day=None, seed=3)
    clean = by_metric(root)
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(hostile_flows(month.AGENT, 60))
    dirty = by_metric(root)
    for metric in ("action.js", "confidence.ks", "field.amount.ks", "field.category.js"):
        assert metric in dirty, (metric, sorted(dirty))
    assert "limits.hugging" in clean and "limits.hugging" in dirty
    # numbers that are not numbers are not counted as numbers
    assert dirty["field.amount.ks"][0] - clean["field.amount.ks"][0] < 60


def test_an_agent_with_only_hostile_decisions_is_measured_not_a_crash(tmp_path):
    # Before: rate.fallback was `status = 'fallback' OR provider = 'rules'`, NULL for a
    # final event without a provider, and count_if over NULLs is NULL: a TypeError.
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(hostile_flows("odd.agent", 40))
    report = measure(root, options=OPTIONS)
    _strict(report.model_dump_json())
    [agent] = report.agents
    assert agent.agent == "odd.agent"
    rates = {m.metric: m for m in agent.metrics if m.metric.startswith("rate.")}
    assert rates["rate.fallback"].current_n + rates["rate.fallback"].reference_n == 40


def test_a_nullable_numeric_field_stays_numeric(tmp_path):
    # `amount: null` on some decisions (a rejection has no amount) is not a type clash.
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=END, days=28, per_day=40, shift_day=None, seed=3)
        traces.append(
            [
                event
                for i in range(30)
                for event in final_flow(
                    month.AGENT,
                    END - timedelta(days=1 + i % 20),
                    {"decision": {"action": "reject", "amount": None}},
                    i,
                )
            ]
        )
    assert "field.amount.ks" in by_metric(root)


finite = st.floats(allow_nan=True, allow_infinity=True)
leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    finite,
    st.text(max_size=12),
)
value = st.recursive(
    leaf,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=6,
)
decision = st.one_of(
    value,
    st.dictionaries(
        st.sampled_from(["action", "confidence", "amount", "category", "reason"])
        | st.text(max_size=8),
        value,
        max_size=5,
    ),
)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    decisions=st.lists(decision, min_size=1, max_size=8),
    latency=finite,
    tokens=st.integers(min_value=-(10**30), max_value=10**30),
)
def test_measure_never_raises_and_its_json_is_strict(decisions, latency, tokens):
    with tempfile.TemporaryDirectory() as folder:
        root = desk(Path(folder))
        events = []
        for i, d in enumerate(decisions):
            at = END - timedelta(days=1 + (i * 3) % 27)
            record = {"decision": d, "latency_ms": latency, "tokens": tokens}
            events += final_flow("prop.agent", at, record, i)
        with TraceStore.for_project(find_project(root)) as traces:
            traces.append(events)
        report = measure(root, options=OPTIONS)
        _strict(report.model_dump_json())


@pytest.mark.parametrize(
    "odd",
    [
        {"": None},
        {'a"b': 1},
        {"a\\b": "x"},
        {"é\x00": 1, "ok": "y"},
        # Before: a numeric key starting with "@" was spliced into the SQL as a column
        # name ("@" alone: a parser error for a healthy store; "@1) ..." worse).
        {"@": 0},
        {"@latency_ms": 3.5},
        {"@1) AS x FROM y --": 2},
    ],
)
def test_a_decision_key_no_json_path_can_spell_is_skipped(tmp_path, odd):
    # Before: a key "" made the discovery query's JSON path invalid, reported as "not a
    # readable trace database (move it aside...)" for a healthy store.
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(final_flow("odd.keys", END - timedelta(days=2), {"decision": odd}, 0))
    _strict(measure(root, options=OPTIONS).model_dump_json())


def test_impossible_latency_tokens_and_cost_do_not_move_the_figures(tmp_path):
    # Before: a final event with latency -5 ms, tokens -10 or a cost of -1 was averaged
    # into the windows' latency quantiles, mean tokens and mean cost.
    root = desk(tmp_path)
    with TraceStore.for_project(find_project(root)) as traces:
        month.write_month(traces, end=END, days=28, per_day=40, shift_day=None, seed=3)
    names = ("latency.p50", "latency.p95", "latency.p99", "tokens.mean", "cost.mean")

    def figures() -> dict[str, tuple[float | None, float | None]]:
        [agent] = [a for a in measure(root, options=OPTIONS).agents if a.agent == month.AGENT]
        return {m.metric: (m.reference, m.current) for m in agent.metrics if m.metric in names}

    clean = figures()
    assert set(clean) == set(names)
    impossible = []
    for i in range(40):
        record = {
            "decision": {"action": "refund"},
            "latency_ms": [-5.0, float("-inf"), float("inf")][i % 3],
            "tokens": [-10, float("inf"), -1][i % 3],
        }
        at = END - timedelta(days=1 + (i % 20))
        impossible += final_flow(month.AGENT, at, record, 1000 + i)  # cost_usd -1.0
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(impossible)
    assert figures() == clean
