"""``mir eval history``'s table in words: the line above it, its columns and one recorded
run's row (computed from ``HistoryRow``, no terminal: the CLI only draws it)."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any

from mir.evals.summary import sparkline

if TYPE_CHECKING:
    from mir.evals.history import HistoryRow

RUN_COLUMNS = (
    "time UTC",
    "suite",
    "pass rate",
    "passed",
    "broken",
    "fixed",
    "gate",
    "model",
    "prompt",
    "run by",
)


def history_heading(agent: str, rows: list[HistoryRow]) -> str:
    """The pass rates' trend over the runs shown, oldest first."""
    trend = sparkline([row.pass_rate for row in rows])
    return f"{agent}: pass rate {trend} (oldest to newest, last {len(rows)} runs)"


def run_cells(row: HistoryRow) -> list[Any]:
    """A recorded run's row: its gate as ``(words, style)``, a failed one in bold red."""
    gate = ("passed" if row.gate_passed else "FAILED") + (
        " (interrupted)" if row.interrupted else ""
    )
    return [
        (row.started_at or row.recorded_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
        row.suite,
        f"{row.pass_rate * 100:.1f}%",
        f"{row.passed}/{row.runs}",
        "-" if row.broken is None else str(row.broken),
        "-" if row.fixed is None else str(row.fixed),
        (gate, "" if row.gate_passed else "bold red"),
        row.model,
        row.prompt_hash[:12] if row.prompt_hash else None,
        row.origin or "mir eval",
    ]
