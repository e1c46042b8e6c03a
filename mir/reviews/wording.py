"""The review queue and its exports in words: ages, a waiting flow's row, the export's
JSON (what ``mir review`` shows, computed without a terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mir.reviews.domain import PendingFlow, compact

if TYPE_CHECKING:
    from mir.reviews.teaching import ExportReport


def age(seconds: float) -> str:
    """``45s``, ``12m``, ``3h 05m``, ``2d 04h``."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600:02d}h"


def queue_row(item: PendingFlow, *, id_width: int | None) -> tuple[str | None, ...]:
    """flow (cut to ``id_width``), age, agent, action, key fields, waits for, expires in."""
    fields = ", ".join(f"{k}={compact(v, 30)}" for k, v in item.fields.items())
    left = (
        age((item.expires_at - item.created_at).total_seconds() - item.age_s)
        if item.expires_at is not None
        else "-"
    )
    return (
        item.flow_id[:id_width],
        age(item.age_s),
        item.agent,
        item.action,
        fields,
        item.waits_for,
        left,
    )


def export_json(report: ExportReport) -> dict[str, Any]:
    return {
        "reviewed": report.reviewed,
        "suites": [
            {"agent": s.agent, "suite": str(s.suite), "added": s.added, "duplicates": s.duplicates}
            for s in report.suites
        ],
        "sft": str(report.sft) if report.sft else None,
        "sft_lines": report.sft_lines,
        "notes": report.notes,
    }
