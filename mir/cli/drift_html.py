"""``mir drift --html FILE``: the drift report as one self-contained page (no scripts,
no network): per agent, a table per kind of drift, reference and current side by side,
with each distribution drawn as inline SVG bars."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mir.drift import DriftReport, MetricResult

_COLORS = {"suspend": "#c0392b", "warn": "#d68910", "ok": "#1e8449"}
_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left}"
    "th{background:#f4f4f4}.verdict{font-weight:600}.muted{color:#888}"
)


def _bars(shares: list[float], color: str) -> str:
    if not shares:
        return ""
    top = max(shares) or 1.0
    width = 8
    rects = "".join(
        f'<rect x="{i * width}" y="{24 - 24 * s / top:.1f}" width="{width - 1}" '
        f'height="{24 * s / top:.1f}" fill="{color}"/>'
        for i, s in enumerate(shares)
    )
    return f'<svg width="{len(shares) * width}" height="24" role="img">{rects}</svg>'


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _row(m: MetricResult) -> str:
    color = _COLORS.get(m.verdict, "#888")
    hist = (
        f"{_bars(m.reference_histogram, '#7f8c8d')} {_bars(m.current_histogram, color)}"
        if m.reference_histogram
        else ""
    )
    cells = [
        escape(m.metric),
        _number(m.reference),
        _number(m.current),
        _number(m.value),
        _number(m.p_value),
        f"{_number(m.warn)} / {_number(m.suspend)}",
        f'<span class="verdict" style="color:{color}">{escape(m.verdict.replace("_", " "))}</span>',
        hist,
        escape(m.detail),
    ]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def page(report: DriftReport) -> str:
    from mir.drift import KINDS

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>mir drift</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>mir drift</h1><p class='muted'>run {escape(report.run_id)} at "
        f"{report.at:%Y-%m-%d %H:%M} UTC</p>",
    ]
    parts += [f"<p class='muted'>{escape(note)}</p>" for note in report.notes]
    head = "".join(
        f"<th>{h}</th>"
        for h in ("metric", "reference", "current", "value", "p", "warn / suspend", "verdict",
                  "reference | current", "detail")
    )  # fmt: skip
    for agent in report.agents:
        verdict = agent.verdict
        parts.append(
            f"<h2>{escape(agent.agent)} <span style='color:{_COLORS.get(verdict, '#888')}'>"
            f"{verdict.upper()}</span>{' (suspended by the breaker)' if agent.suspended else ''}"
            f"</h2><p>current {escape(agent.current.label)} ({agent.current.decisions} "
            f"decisions) vs reference {escape(agent.reference.label)} "
            f"({agent.reference.decisions} decisions)</p>"
        )
        if agent.likely_causes:
            causes = "; ".join(escape(c) for c in agent.likely_causes)
            parts.append(f"<p><b>likely causes:</b> {causes}</p>")
        for kind in KINDS:
            rows = [m for m in agent.metrics if m.kind == kind]
            if rows:
                body = "".join(_row(m) for m in rows)
                parts.append(f"<h3>{kind} drift</h3><table><tr>{head}</tr>{body}</table>")
    parts.append("</body></html>\n")
    return "".join(parts)
