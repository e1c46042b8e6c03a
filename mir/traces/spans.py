"""One flow as OpenTelemetry spans: ids, names, times, attributes (GenAI conventions).

One trace per flow, one root ``invoke_agent`` span covering it, one child span per
event. Ids are derived from the flow, so exporting twice (to a file, or live as the
flow happens) gives the same ids and a backend dedupes. A flow started inside a
caller's trace (a W3C ``traceparent`` given to ``decide``, recorded in the flow's
first event) takes the caller's trace id, and its root span is a child of the
caller's span. Model-call steps carry ``gen_ai.operation.name=chat``,
``gen_ai.provider.name``, ``gen_ai.request.model`` and ``gen_ai.usage.*_tokens``;
mir's own fields go under ``mir.*``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from mir.traces.domain import TraceEvent

TRACEPARENT = "traceparent"  # the key of the caller's trace context in a flow's first event
INTERNAL, CLIENT = 1, 3  # OTLP span kinds
_MODEL_STEPS = {"infer"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")

Value = str | int | float | bool | list[str]


class TraceContext(NamedTuple):
    """A W3C trace context: the caller's trace and the span a flow is a child of."""

    trace_id: str  # 32 lowercase hex digits
    span_id: str  # 16 lowercase hex digits
    flags: str = "01"

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-{self.flags}"


def parse_traceparent(value: object) -> TraceContext | None:
    """The trace context in a ``traceparent`` header value, or None when it is not one
    (W3C: an invalid header is ignored, and the flow starts a trace of its own)."""
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_id, span_id, flags = match.groups()
    if version == "ff" or set(trace_id) == {"0"} or set(span_id) == {"0"}:
        return None
    return TraceContext(trace_id, span_id, flags)


_CALLER: ContextVar[TraceContext | None] = ContextVar("mir_caller_trace", default=None)


@contextmanager
def caller_trace(traceparent: str | None) -> Iterator[None]:
    """Flows opened inside are children of ``traceparent``'s span (an invalid value is
    ignored, as W3C asks); without one, of the caller's current OpenTelemetry span."""
    token = _CALLER.set(parse_traceparent(traceparent) if traceparent else None)
    try:
        yield
    finally:
        _CALLER.reset(token)


def caller_trace_data() -> dict[str, str]:
    """What a flow's first event records of the caller's trace: ``{"traceparent": ...}``,
    or nothing when the caller has no trace."""
    context = _CALLER.get() or _current_otel_span()
    return {TRACEPARENT: context.traceparent} if context else {}


def _current_otel_span() -> TraceContext | None:
    trace = sys.modules.get("opentelemetry.trace")  # only a caller that uses it has one
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    flags = int(context.trace_flags)
    return TraceContext(f"{context.trace_id:032x}", f"{context.span_id:016x}", f"{flags:02x}")


def flow_trace_id(first: TraceEvent) -> tuple[str, bool]:
    """The trace id a flow's spans carry, and whether it is the caller's."""
    trace_id, caller = flow_context(first)
    return trace_id, caller is not None


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Value]
    failed: bool | None = None  # set on a flow's root span: aborted or not


def flow_context(first: TraceEvent) -> tuple[str, str | None]:
    """(trace id, the caller's span id or None) of the flow ``first`` opens."""
    caller = parse_traceparent(first.data.get(TRACEPARENT)) if first.seq == 0 else None
    if caller is not None:
        return caller.trace_id, caller.span_id
    return hashlib.sha256(first.flow_id.encode()).hexdigest()[:32], None


def flow_spans(events: Sequence[TraceEvent]) -> list[Span]:
    """The root span and one span per event, for the whole flow."""
    events = sorted(events, key=lambda e: e.seq)
    trace_id, caller = flow_context(events[0])
    root = root_span(events, trace_id, caller)
    return [root, *(event_span(e, trace_id, root.span_id) for e in events)]


def root_span(events: Sequence[TraceEvent], trace_id: str, caller: str | None) -> Span:
    first = events[0]
    status = next((e.status for e in reversed(events) if e.status), None)
    attributes: dict[str, Value] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": first.agent,
        "mir.flow_id": first.flow_id,
    }
    if status:
        attributes["mir.status"] = status
    return Span(
        trace_id=trace_id,
        span_id=span_id(first.flow_id, "root"),
        parent_id=caller,
        name=f"invoke_agent {first.agent}",
        kind=INTERNAL,
        start_ns=min(nanos(e.at) - int(e.latency_ms * 1e6) for e in events),
        end_ns=max(nanos(e.at) for e in events),
        attributes=attributes,
        failed=status == "aborted",
    )


def event_span(event: TraceEvent, trace_id: str, parent: str) -> Span:
    model_call = event.step in _MODEL_STEPS
    attributes: dict[str, Value] = {
        "mir.step": event.step,
        "mir.seq": event.seq,
        "mir.event_id": event.event_id,
        "mir.flow_id": event.flow_id,
        "gen_ai.agent.name": event.agent,
    }
    if model_call:
        attributes["gen_ai.operation.name"] = "chat"
    optional = {
        "gen_ai.provider.name": event.provider,
        "gen_ai.request.model": event.model,
        "mir.prompt_hash": event.prompt_hash,
        "mir.prompt_version": event.prompt_version,
        "mir.status": event.status,
    }
    attributes.update({k: v for k, v in optional.items() if v is not None})
    if event.prompt_tokens or event.completion_tokens:
        attributes["gen_ai.usage.input_tokens"] = event.prompt_tokens
        attributes["gen_ai.usage.output_tokens"] = event.completion_tokens
    if event.cost_usd:
        attributes["mir.cost_usd"] = event.cost_usd
    if event.reasons:
        attributes["mir.reasons"] = list(event.reasons)
    if event.data:
        attributes["mir.data"] = json.dumps(event.data, default=str)
    end = nanos(event.at)
    return Span(
        trace_id=trace_id,
        span_id=span_id(event.flow_id, event.event_id),
        parent_id=parent,
        name=f"chat {event.model}" if model_call and event.model else event.step,
        kind=CLIENT if model_call else INTERNAL,
        start_ns=end - int(event.latency_ms * 1e6),
        end_ns=end,
        attributes=attributes,
    )


def span_id(flow_id: str, key: str) -> str:
    return hashlib.sha256(f"{flow_id}/{key}".encode()).hexdigest()[:16]


def nanos(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1_000
