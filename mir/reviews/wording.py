"""The review queue and its exports in words: ages, a waiting flow's row, the line under
a page that is not the last, what a read did, the export's summary and JSON (what ``mir
review`` shows, without a terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mir.reviews.domain import PendingFlow, PendingPage, compact

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


QUEUE_COLUMNS = ("flow", "age", "agent", "action", "key fields", "waits for", "expires in")


def queue_row(
    item: PendingFlow, *, id_width: int | None, separator: str = ", "
) -> tuple[str | None, ...]:
    """flow (cut to ``id_width``), age, agent, action, key fields (joined by
    ``separator``), waits for, expires in."""
    fields = separator.join(f"{k}={compact(v, 30)}" for k, v in item.fields.items())
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


def more_line(page: PendingPage) -> str | None:
    """Under a page that is not the last: how many it showed, and the next ``--offset``."""
    shown = len(page.items)
    if page.total - page.offset - shown <= 0:
        return None
    return f"{shown} of {page.total} shown; next: --offset {page.offset + shown}"


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


def page_lines(page: PendingPage, *, always: bool) -> list[tuple[bool, str]]:
    """What a read of the queue did besides reading, one line each: flows closed as
    expired, reminders sent, flows left for ``mir review expire``, alerts that failed.
    Each line is ``(result, text)``: a result line belongs with the command's output
    when the command is about it (``always``: ``expire``, ``remind``), a warning never."""
    lines = [
        (True, f"expired {flow_id}: waited past its TTL, never executed")
        for flow_id in page.expired
    ]
    if always and not page.expired:
        lines.append((True, "no flow waited past its TTL"))
    lines += [(True, f"reminded reviewers of {flow_id}") for flow_id in page.reminded]
    if page.still_due:
        left = f"{page.still_due} more flow(s) past their TTL are left for `mir review expire`"
        lines.append((False, left))
    lines += [(False, f"warning: {note}") for note in page.notes]
    return lines


def export_lines(report: ExportReport) -> list[str]:
    """``mir review export``'s summary: cases added per suite, chats written."""
    lines = [] if report.reviewed else ["no reviewed flows"]
    for s in report.suites:
        there = f", {len(s.duplicates)} already there" if s.duplicates else ""
        lines.append(f"{s.agent}: {len(s.added)} case(s) added to {s.suite}{there}")
    if report.sft is not None:
        lines.append(f"{report.sft_lines} chat(s) written to {report.sft}")
    return lines
