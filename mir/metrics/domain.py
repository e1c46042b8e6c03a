"""What mir counts for Prometheus, free of prometheus_client: the metric names and their
labels, what each trace event adds to them, and the ``--metrics`` address.

Labels are closed words only: the agent's name, a flow status, the decided action, the
flow's source and the step. Nothing of a flow's input, context, decision fields or
errors ever becomes a label or a value: an action that is not a plain name is
``other``, a source mir does not know is ``other``. The runtime puts only a contract's
actions in a final record (a proposal that fails the check has no decision), and as a
second bound each agent's distinct action words, and the agents, are capped: past the
cap a new word is ``other``, so no stream of events grows the label sets without end.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mir.errors import UsageError
from mir.traces import FLOW_SOURCES, TraceEvent

DECISIONS = "mir_decisions"  # counter: mir_decisions_total
REVIEW_REQUESTS = "mir_review_requests"
SHED = "mir_shed"
DEADLINE_SHED = "mir_deadline_shed"
SUSPENSIONS = "mir_suspensions"
STEP_LATENCY = "mir_step_latency_seconds"
DECISION_LATENCY = "mir_decision_latency_seconds"
QUEUE_DEPTH = "mir_queue_depth"
REVIEWS_PENDING = "mir_reviews_pending"
OLDEST_REVIEW_AGE = "mir_reviews_oldest_pending_age_seconds"
AGENT_SUSPENDED = "mir_agent_suspended"

Kind = Literal["counter", "histogram"]


@dataclass(frozen=True)
class Metric:
    name: str
    kind: Kind
    labels: tuple[str, ...]
    help: str


COUNTED: tuple[Metric, ...] = (
    Metric(
        DECISIONS, "counter", ("agent", "status", "action", "source"),
        "Flows that reached an outcome (their final event), by status and decided action.",
    ),
    Metric(
        REVIEW_REQUESTS, "counter", ("agent", "source"),
        "Flows that started waiting for a human review.",
    ),
    Metric(SHED, "counter", ("agent", "source"), "Model calls shed by back-pressure (any cause)."),
    Metric(
        DEADLINE_SHED, "counter", ("agent", "source"),
        "Model calls shed because their deadline passed or could not be met.",
    ),
    Metric(SUSPENSIONS, "counter", ("agent",), "Agents suspended by a drift monitor."),
    Metric(
        STEP_LATENCY, "histogram", ("agent", "step", "source"),
        "Time of the steps that record one: infer (a model call), final (the rest).",
    ),
    Metric(
        DECISION_LATENCY, "histogram", ("agent", "source"),
        "Wall time of a flow from its start to its outcome.",
    ),
)  # fmt: skip
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
OTHER = "other"
NONE = "none"
ACTIONS_PER_AGENT = 64  # distinct action words one agent's counters carry, then "other"
AGENTS = 512  # distinct agent words, then "other"


@dataclass(frozen=True)
class Reading:
    """One change to a counted metric: ``value`` added to a counter, or observed."""

    metric: str
    labels: tuple[str, ...]
    value: float = 1.0


def word(value: Any) -> str:
    """A label value that can carry nothing of a flow's data: a plain name, else other."""
    if value is None:
        return NONE
    return value if isinstance(value, str) and _NAME.fullmatch(value) else OTHER


def source_of(value: Any) -> str:
    if value is None:
        return "production"  # a flow from before sources were explicit
    return value if value in FLOW_SOURCES else OTHER


class FlowSources:
    """Each flow's source, remembered from its snapshot (bounded), for the events of a
    flow that do not carry it (model calls, a review request); and the agent and action
    words already used as labels, each set capped (``AGENTS``, ``ACTIONS_PER_AGENT``)."""

    def __init__(self, size: int = 10_000, agents: int = AGENTS, actions: int = ACTIONS_PER_AGENT):
        self._size = size
        self._known: OrderedDict[str, str] = OrderedDict()
        self._caps = (agents, actions)
        self._words: dict[str, set[str]] = {}  # agent word -> its action words

    def agent(self, value: Any) -> str:
        """``value`` as an agent label: its word while fewer than the cap are known."""
        name = word(value)
        if name in self._words or name in (OTHER, NONE):
            return name
        if len(self._words) >= self._caps[0]:
            return OTHER
        self._words[name] = set()
        return name

    def action(self, agent: str, value: Any) -> str:
        """``value`` as ``agent``'s action label, within the per-agent cap."""
        name = word(value)
        seen = self._words.setdefault(agent, set())
        if name in seen or name in (OTHER, NONE):
            return name
        if len(seen) >= self._caps[1]:
            return OTHER
        seen.add(name)
        return name

    def note(self, flow_id: str, source: str) -> None:
        self._known[flow_id] = source
        self._known.move_to_end(flow_id)
        while len(self._known) > self._size:
            self._known.popitem(last=False)

    def of(self, flow_id: str) -> str:
        return self._known.get(flow_id, "production")

    def forget(self, flow_id: str) -> None:
        self._known.pop(flow_id, None)


def readings(events: Sequence[TraceEvent], sources: FlowSources) -> list[Reading]:
    """What ``events`` (as ``TraceStore.append`` wrote them) add to the counted metrics."""
    found: list[Reading] = []
    for event in events:
        found.extend(_event(event, sources))
    return found


def _event(event: TraceEvent, sources: FlowSources) -> Iterable[Reading]:
    data = event.data if isinstance(event.data, dict) else {}
    agent = sources.agent(event.agent)
    if event.step == "snapshot":
        sources.note(event.flow_id, source_of(data.get("source")))
        return
    if data.get("event") == "agent_suspended":  # the drift breaker's brake, not a flow
        yield Reading(SUSPENSIONS, (agent,))
        return
    if event.step == "final" and event.status is not None:
        source = source_of(data.get("source", sources.of(event.flow_id)))
        sources.forget(event.flow_id)
        record = data.get("record") if isinstance(data.get("record"), dict) else {}
        yield Reading(
            DECISIONS, (agent, event.status, sources.action(agent, record.get("action")), source)
        )
        total = record.get("latency_ms")
        if isinstance(total, int | float) and not isinstance(total, bool) and total > 0:
            yield Reading(DECISION_LATENCY, (agent, source), total / 1000)
    else:
        source = sources.of(event.flow_id)
    if event.step == "route" and event.status == "pending_review":
        yield Reading(REVIEW_REQUESTS, (agent, source))
    if event.step == "infer" and "shed" in event.reasons:
        yield Reading(SHED, (agent, source))
        if shed_by_deadline(data.get("error")):
            yield Reading(DEADLINE_SHED, (agent, source))
    if event.latency_ms > 0:
        yield Reading(STEP_LATENCY, (agent, event.step, source), event.latency_ms / 1000)


def shed_by_deadline(error: Any) -> bool:
    """Whether a shed call's error names its deadline (passed, or an estimated wait past
    the time left) rather than a full or displacing queue."""
    text = error if isinstance(error, str) else ""
    return "deadline" in text or "ms left" in text


def parse_address(text: str, option: str = "--metrics") -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` (host 127.0.0.1 when left out)."""
    raw = text.strip()
    host, sep, port = raw.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", raw
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(
            f"{option} {text!r} is not an address to serve on",
            hint="give PORT or HOST:PORT, a port 1-65535: 9464 or 127.0.0.1:9464",
        )
    return host, int(port)
