"""How a drift result reads, on a terminal and in the HTML page alike: numbers (rates as
percentages), hashes cut to 12 characters, distributions as block characters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.drift.domain import AgentDrift, HistoryPoint, MetricResult, Window

SPARK = "▁▂▃▄▅▆▇█"
# A hash in a detail or a likely cause is shown by its first 12 characters (the JSON
# keeps it whole): 64 characters of hex pushed the metric names out of a 120-column table.
_HASH = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{8,}\b")
METRIC_COLUMNS = (
    "metric",
    "reference",
    "current",
    "value",
    "p",
    "warn/suspend",
    "verdict",
    "histogram ref | cur",
    "detail",
)


def metric_column(column: str, longest: int) -> dict[str, Any]:
    """How a terminal's drift table lays out ``column`` (rich ``add_column`` options):
    metric names are never cut (`mir drift history` takes them), so the column is at
    least ``longest`` wide; the detail folds; verdicts and levels stay whole."""
    if column == "metric":
        return {"no_wrap": True, "min_width": longest}
    if column == "detail":
        return {"overflow": "fold", "ratio": 1}
    return {"no_wrap": True} if column in ("verdict", "warn/suspend") else {}


def sparkline(values: list[float | None]) -> str:
    """One block character per value, scaled between the lowest and the highest."""
    numbers = [v for v in values if v is not None]
    if not numbers:
        return ""
    low, high = min(numbers), max(numbers)
    span = high - low
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        else:
            out.append(SPARK[int((v - low) / span * (len(SPARK) - 1)) if span else 0])
    return "".join(out)


def histogram(shares: list[float]) -> str:
    """A distribution's shares as block characters (the tallest is a full block)."""
    if not shares:
        return ""
    top = max(shares) or 1.0
    return "".join(SPARK[min(len(SPARK) - 1, int(s / top * (len(SPARK) - 1)))] for s in shares)


def short_hashes(text: str) -> str:
    """``text`` with each long hex hash cut to its first 12 characters."""
    return _HASH.sub(r"\1", text)


def number(value: float | None, metric: str = "") -> str:
    """A metric's value: rates and limit hugging as percentages, else 4 digits."""
    if value is None:
        return "-"
    if metric.startswith("rate.") or metric == "limits.hugging":
        return f"{value:.1%}"
    return f"{value:.4g}"


# how a verdict is styled where it is shown (style names as rich reads them)
VERDICT_STYLE = {
    "suspend": "bold red",
    "warn": "yellow",
    "ok": "green",
    "not_enough_data": "dim",
    "info": "dim",
}


def verdict_words(verdict: str) -> str:
    return verdict.replace("_", " ")


def agent_heading(agent: AgentDrift) -> list[tuple[str, str]]:
    """The line above an agent's tables, as ``(text, style)`` parts: its name, verdict,
    whether the breaker suspended it, and the two windows compared."""
    verdict = agent.verdict
    return [
        (agent.agent, "bold"),
        ("  ", ""),
        (verdict.replace("_", " ").upper(), VERDICT_STYLE.get(verdict, "")),
        ("  SUSPENDED by the breaker" if agent.suspended else "", "bold red"),
        (
            f"  current {agent.current.label} ({agent.current.decisions} decisions) vs "
            f"reference {agent.reference.label} ({agent.reference.decisions} decisions)",
            "",
        ),
    ]


def metric_cells(m: MetricResult) -> list[str]:
    """One row of a drift table, in ``METRIC_COLUMNS`` order (the levels and the
    statistic's value are plain numbers, whatever the metric)."""
    return [
        m.metric,
        number(m.reference, m.metric),
        number(m.current, m.metric),
        number(m.value),
        "-" if m.p_value is None else f"{m.p_value:.2g}",
        f"{number(m.warn)}/{number(m.suspend)}",
        verdict_words(m.verdict),
        f"{histogram(m.reference_histogram)} | {histogram(m.current_histogram)}"
        if m.reference_histogram
        else "",
        short_hashes(m.detail),
    ]


def metric_row(m: MetricResult) -> list[str | tuple[str, str]]:
    """``metric_cells`` as a terminal table's cells: the verdict ``(words, style)``."""
    cells: list[str | tuple[str, str]] = list(metric_cells(m))
    cells[METRIC_COLUMNS.index("verdict")] = (
        verdict_words(m.verdict),
        VERDICT_STYLE.get(m.verdict, ""),
    )
    return cells


def shown_metrics(agent: AgentDrift, kind: str, show_all: bool) -> list[MetricResult]:
    """The metrics of one kind a table lists: those that moved, or all with ``--all``."""
    return [
        m
        for m in agent.metrics
        if m.kind == kind and (show_all or m.verdict in ("warn", "suspend"))
    ]


def brief_lines(agent: AgentDrift) -> list[str]:
    """A watch tick's lines for an agent: each metric past a level, suspend first."""
    tripped = agent.tripped("suspend") + agent.tripped("warn")
    return [f"  {m.verdict}: {m.metric} = {m.value:.4g}" for m in tripped]


def agent_notes(agent: AgentDrift, show_all: bool) -> list[str]:
    """What follows an agent's tables: likely causes, rubric notes, and (without
    ``--all``) why nothing was listed."""
    lines = []
    if agent.likely_causes:
        lines.append("likely causes: " + short_hashes("; ".join(agent.likely_causes)))
    if show_all:
        return lines
    count = len(agent.metrics)
    lines += [
        f"  {m.metric}: {m.detail}"
        for m in agent.metrics
        if m.family == "rubric" and m.verdict == "info"
    ]
    if agent.verdict == "not_enough_data" and agent.metrics:
        lines.append(
            f"  {count} metrics: not enough data in a window to judge any (--all to list them)"
        )
    elif not (agent.tripped("warn") or agent.tripped("suspend")):
        lines.append(f"  {count} metrics, none moved (--all to list them)")
    return lines


HISTORY_COLUMNS = ("metric", "kind", "runs", "first", "last", "latest", "verdict", "trend")


def history_rows(points: list[HistoryPoint]) -> list[list[str]]:
    """One row per metric (in ``HISTORY_COLUMNS`` order): its runs, latest value and
    verdict, and a sparkline of its last 40 values."""
    by_metric: dict[str, list[HistoryPoint]] = {}
    for point in points:
        by_metric.setdefault(point.metric, []).append(point)
    rows = []
    for metric, series in by_metric.items():
        latest = series[-1]
        rows.append(
            [
                metric,
                latest.kind,
                str(len(series)),
                f"{series[0].at:%Y-%m-%d %H:%M}",
                f"{latest.at:%Y-%m-%d %H:%M}",
                number(latest.value),
                verdict_words(latest.verdict),
                sparkline([p.value for p in series[-40:]]),
            ]
        )
    return rows


def history_cells(points: list[HistoryPoint]) -> list[list[tuple[str, str]]]:
    """``history_rows`` as a terminal table's cells, each ``(text, style)``: the verdict
    styled as ``VERDICT_STYLE`` says."""
    styles = {verdict_words(verdict): style for verdict, style in VERDICT_STYLE.items()}
    at = HISTORY_COLUMNS.index("verdict")
    return [
        [(c, styles.get(c, "") if i == at else "") for i, c in enumerate(row)]
        for row in history_rows(points)
    ]


def frozen_line(frozen: Window, agent: str, name: str) -> str:
    """What ``mir drift snapshot`` answers: how many decisions it froze, from when to when."""
    return (
        f"froze {frozen.decisions} decisions of {agent} as {name!r} "
        f"({frozen.start:%Y-%m-%d %H:%M} .. {frozen.end:%Y-%m-%d %H:%M})"
    )
