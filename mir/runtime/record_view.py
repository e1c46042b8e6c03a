"""A decision record as ``mir run agent``, ``mir approve`` and ``mir reject`` show it:
labelled rows of text with a style, and the JSON with who reviewed it (no terminal)."""

from __future__ import annotations

import json
from typing import Any

from mir.runtime.records import DecisionRecord

_STYLE = {
    "executed": "green",
    "fallback": "yellow",
    "pending_review": "cyan",
    "rejected": "magenta",
    "stale": "yellow",
    "aborted": "red",
}


def record_json(record: DecisionRecord) -> dict[str, Any]:
    shown = record.model_dump()
    if record.reviewed_by is not None:  # approve/reject: who, when
        shown["review"] = {"by": record.reviewed_by, "at": record.reviewed_at}
    return shown


def record_rows(record: DecisionRecord) -> list[tuple[str, str, str]]:
    """(label, text, style) rows: status, action, decision, reasons, why, model, time,
    review, and the commands that act on a flow waiting for review."""
    style = _STYLE.get(record.status, "")
    rows = [
        ("status", record.status, f"bold {style}"),
        ("action", f"{record.action or '-'}  (executed: {record.executed})", ""),
    ]
    if record.decision is not None:
        rows.append(("decision", json.dumps(record.decision, ensure_ascii=False), ""))
    rows.append(("reasons", ", ".join(record.reasons), ""))
    if record.problems:
        rows.append(("why", "\n".join(record.problems), ""))
    rows.append(("model", f"{record.provider or '-'} / {record.model or '-'}", ""))
    rows.append(("time", f"{record.latency_ms:.1f} ms, {record.tokens} tokens", ""))
    if record.reviewed_by is not None:
        verdict = "rejected" if record.status == "rejected" else "approved"
        if record.status == "pending_review":
            verdict = "approved (more approvals needed)"
        when = (record.reviewed_at or "?").replace("T", " ")[:19]
        rows.append(("review", f"{verdict} by {record.reviewed_by} at {when} UTC", ""))
    if record.status == "pending_review":
        next_step = f"mir approve {record.flow_id}  |  mir reject {record.flow_id}"
        rows.append(("next", next_step, ""))
    return rows
