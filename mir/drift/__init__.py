"""Drift: per-agent metrics (current vs reference window) in DuckDB, and the breaker."""

from mir.alerts import AlertSettings, send_alert
from mir.drift.breaker import Breaker, PeriodicCheck
from mir.drift.domain import (
    KINDS,
    AgentDrift,
    DriftReport,
    HistoryPoint,
    Kind,
    MetricResult,
    Window,
)
from mir.drift.formatting import (
    HISTORY_COLUMNS,
    METRIC_COLUMNS,
    VERDICT_STYLE,
    agent_heading,
    agent_notes,
    brief_lines,
    frozen_line,
    history_cells,
    history_rows,
    metric_cells,
    metric_column,
    metric_row,
    number,
    short_hashes,
    shown_metrics,
    sparkline,
    verdict_words,
)
from mir.drift.history_log import copy_drift_history
from mir.drift.html import html_page, write_html
from mir.drift.monitor import measure
from mir.drift.references import history, snapshot, watch
from mir.drift.statistics import two_proportion
from mir.drift.suspensions import check
from mir.drift.windows import WindowOptions, parse_duration

__all__ = [
    "HISTORY_COLUMNS",
    "KINDS",
    "METRIC_COLUMNS",
    "VERDICT_STYLE",
    "AgentDrift",
    "AlertSettings",
    "Breaker",
    "DriftReport",
    "HistoryPoint",
    "Kind",
    "MetricResult",
    "PeriodicCheck",
    "Window",
    "WindowOptions",
    "agent_heading",
    "agent_notes",
    "brief_lines",
    "check",
    "copy_drift_history",
    "frozen_line",
    "history",
    "history_cells",
    "history_rows",
    "html_page",
    "measure",
    "metric_cells",
    "metric_column",
    "metric_row",
    "number",
    "parse_duration",
    "send_alert",
    "short_hashes",
    "shown_metrics",
    "snapshot",
    "sparkline",
    "two_proportion",
    "verdict_words",
    "watch",
    "write_html",
]
