"""``mir drift --html FILE``: the drift report as one self-contained page (no scripts,
no network): per agent, a table per kind of drift, reference and current side by side,
with each distribution drawn as inline SVG bars."""

from __future__ import annotations

from html import escape
from pathlib import Path

from mir.drift.domain import KINDS, DriftReport, MetricResult
from mir.drift.formatting import number, short_hashes, verdict_words
from mir.errors import UsageError

_COLORS = {"suspend": "#c0392b", "warn": "#d68910", "ok": "#1e8449"}
# Fits a 1280 px window: the table takes the page's width and long values (hashes, a
# detail, a note) wrap anywhere rather than push it wider; a table that still cannot
# fit scrolls inside its own box, never the page.
_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:2em;color:#222;overflow-wrap:anywhere}"
    ".scroll{max-width:100%;overflow-x:auto}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em;width:100%}"
    "td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;"
    "overflow-wrap:anywhere}"
    "td:first-child{overflow-wrap:normal;white-space:nowrap}"
    "th{background:#f4f4f4}.verdict{font-weight:600;white-space:nowrap}.muted{color:#888}"
)
_HEAD = "".join(
    f"<th>{h}</th>"
    for h in ("metric", "reference", "current", "value", "p", "warn / suspend", "verdict",
              "reference | current", "detail")
)  # fmt: skip


def write_html(report: DriftReport, target: Path) -> None:
    """Write the page to ``target`` (a usage error, one line, when it cannot be)."""
    try:
        target.write_text(html_page(report), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --html {target} ({exc.strerror})") from exc


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


def _row(m: MetricResult) -> str:
    color = _COLORS.get(m.verdict, "#888")
    hist = (
        f"{_bars(m.reference_histogram, '#7f8c8d')} {_bars(m.current_histogram, color)}"
        if m.reference_histogram
        else ""
    )
    cells = [
        escape(m.metric),
        number(m.reference, m.metric),
        number(m.current, m.metric),
        number(m.value),
        "-" if m.p_value is None else f"{m.p_value:.2g}",
        f"{number(m.warn)} / {number(m.suspend)}",
        f'<span class="verdict" style="color:{color}">{escape(verdict_words(m.verdict))}</span>',
        hist,
        escape(short_hashes(m.detail)),
    ]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def html_page(report: DriftReport) -> str:
    """The whole page, as text."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>mir drift</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>mir drift</h1><p class='muted'>run {escape(report.run_id)} at "
        f"{report.at:%Y-%m-%d %H:%M} UTC</p>",
    ]
    parts += [f"<p class='muted'>{escape(note)}</p>" for note in report.notes]
    for agent in report.agents:
        verdict = agent.verdict
        parts.append(
            f"<h2>{escape(agent.agent)} <span style='color:{_COLORS.get(verdict, '#888')}'>"
            f"{verdict.replace('_', ' ').upper()}</span>"
            f"{' (suspended by the breaker)' if agent.suspended else ''}"
            f"</h2><p>current {escape(agent.current.label)} ({agent.current.decisions} "
            f"decisions) vs reference {escape(agent.reference.label)} "
            f"({agent.reference.decisions} decisions)</p>"
        )
        if agent.likely_causes:
            causes = "; ".join(escape(short_hashes(c)) for c in agent.likely_causes)
            parts.append(f"<p><b>likely causes:</b> {causes}</p>")
        for kind in KINDS:
            rows = [m for m in agent.metrics if m.kind == kind]
            if rows:
                body = "".join(_row(m) for m in rows)
                parts.append(
                    f"<h3>{kind} drift</h3><div class='scroll'><table><tr>{_HEAD}</tr>{body}"
                    "</table></div>"
                )
    parts.append("</body></html>\n")
    return "".join(parts)
