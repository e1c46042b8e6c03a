"""What ``mir traces list``, ``show`` and ``compact`` say, in words: a flow's row, an
event's row, the data each step recorded, the flow's reviews (from its events), and what
a compaction folded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mir.traces.domain import UNFINISHED, CompactionResult, FlowSummary, TraceEvent
from mir.traces.spans import flow_trace_id

FLOW_COLUMNS = ("flow", "agent", "source", "status", "action", "steps", "model", "tokens")
EVENT_COLUMNS = ("seq", "step", "status", "reasons", "provider/model", "prompt")


def cost_words(value: float) -> str:
    return f"${value:.4f}" if value else "-"


def flow_cells(flow: FlowSummary, id_width: int | None) -> list[Any]:
    """A flow's row in ``mir traces list`` (its id cut to ``id_width``, if given)."""
    return [
        flow.flow_id[:id_width],
        flow.agent,
        flow.source,
        flow.status or UNFINISHED,
        flow.action,
        flow.steps,
        flow.model,
        flow.tokens,
        cost_words(flow.cost_usd),
        f"{flow.latency_ms:.0f}",
        flow.updated_at.strftime("%m-%d %H:%M:%S"),
    ]


def event_cells(event: TraceEvent) -> list[Any]:
    """An event's row in ``mir traces show``."""
    return [
        event.seq,
        event.step,
        event.status,
        ", ".join(event.reasons),
        "/".join(part for part in (event.provider, event.model) if part),
        (event.prompt_hash or "")[:12],
        f"{event.prompt_tokens}/{event.completion_tokens}",
        cost_words(event.cost_usd),
        f"{event.latency_ms:.1f}",
    ]


def event_details(event: TraceEvent) -> tuple[dict[str, Any], Any]:
    """What an event recorded besides its row: its data, and apart from it the rendered
    prompt an ``infer`` step kept (``None`` for any other step)."""
    data = dict(event.data or {})
    prompt = data.pop("prompt", None) if event.step == "infer" else None
    return data, prompt


def flow_heading(events: Sequence[TraceEvent]) -> str:
    """The first line of ``mir traces show``: the flow, its agent and its trace id (the
    caller's, when the flow was started inside one; else derived from the flow id)."""
    first = events[0]
    trace_id, callers = flow_trace_id(first)
    whose = "the caller's trace" if callers else "its own trace"
    return f"flow {first.flow_id}  agent {first.agent}  trace {trace_id} ({whose})"


def flow_review_lines(events: Sequence[TraceEvent]) -> list[str]:
    """One line per review (who, verdict, signed or not, correction) and the override."""
    lines = []
    for event in events:
        data = event.data or {}
        if event.step == "review" and "by" in data:
            signed = "signed" if data.get("signature") else "unsigned"
            count = data.get("approvals")
            have = (
                f", {count.get('have')} of {count.get('need')}" if isinstance(count, dict) else ""
            )
            line = f"review: {data.get('verdict')} by {data.get('by')} ({signed}{have})"
            if data.get("correction"):
                line += f", correction {json.dumps(data['correction'], ensure_ascii=False)}"
            lines.append(line)
        if event.step == "final" and data.get("human_override"):
            record = data.get("record") or {}
            lines.append(
                "human override: executed "
                f"{json.dumps(record.get('decision'), ensure_ascii=False)} instead of the "
                f"model's {json.dumps(data.get('proposal'), ensure_ascii=False)}"
            )
    return lines


def compaction_line(result: CompactionResult, db_path: Path) -> str:
    """What ``mir traces compact`` folded, and into which database."""
    line = f"compacted {result.segments} segment(s), {result.events} event line(s) into {db_path}"
    if result.shipped:
        line += (
            f"; shipped {result.shipped} segment(s), {result.shipped_events} event line(s) "
            "to the fleet's lake"
        )
    return line
