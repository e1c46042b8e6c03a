"""Collects one flow's trace events and writes them at checkpoints.

Events are buffered and appended in batches at the points that matter for recovery:
before a side effect (so a crash mid-execution leaves the decision on disk), when a
flow waits for review (so a later process can resume it), and at the end. Fewer
appends keep trace persistence off the critical path of every step.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mir.runtime.ports import TraceSink
from mir.traces import TraceEvent


def jsonable(value: Any) -> Any:
    """Plain JSON types only (executors and models may hand back anything); NaN and
    Infinity become null because no trace store must be asked to keep them.

    Total: a value JSON cannot spell (nesting past Python's recursion limit, an integer
    of 5,000 digits, a ``__str__`` that raises) is written bounded instead of failing
    the flow, so the record of a hostile input is never lost to the hostility."""
    try:
        return _finite(json.loads(json.dumps(value, default=str)))
    except (ValueError, TypeError, RecursionError, OverflowError):
        return _bounded(value, 0)


_MAX_TRACE_DEPTH = 40


def _bounded(value: Any, depth: int) -> Any:
    if depth > _MAX_TRACE_DEPTH:
        return "<nested too deep>"
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 256 else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_text(k): _bounded(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(v, depth + 1) for v in value]
    return _text(value)


def _text(value: Any) -> str:
    try:
        return str(value)[:4096]
    except Exception:  # a hostile __str__ / __repr__
        return f"<unprintable {type(value).__name__}>"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def safe_text(text: str, limit: int = 4096) -> str:
    """Raw model output for the trace: bounded, and lone surrogates (invalid UTF-8 that
    a provider let through) escaped so every store can write it."""
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass
class FlowRecorder:
    sink: TraceSink
    flow_id: str
    agent: str
    next_seq: int = 0
    buffer: list[TraceEvent] = field(default_factory=list)
    events: list[TraceEvent] = field(default_factory=list)

    def emit(self, step: str, *, at: datetime | None = None, **fields: Any) -> TraceEvent:
        if "data" in fields:
            fields["data"] = jsonable(fields["data"])
        if "reasons" in fields:
            fields["reasons"] = tuple(str(r) for r in fields["reasons"])
        extra = {"at": at} if at is not None else {}
        event = TraceEvent(
            flow_id=self.flow_id, seq=self.next_seq, step=step, agent=self.agent, **extra, **fields
        )
        self.next_seq += 1
        self.buffer.append(event)
        self.events.append(event)
        return event

    def flush(self) -> None:
        if self.buffer:
            self.sink.append(list(self.buffer))
            self.buffer.clear()
