"""How a drift result reads, on a terminal and in the HTML page alike: numbers (rates as
percentages), hashes cut to 12 characters, distributions as block characters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mir.drift.domain import MetricResult

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


def verdict_words(verdict: str) -> str:
    return verdict.replace("_", " ")


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
