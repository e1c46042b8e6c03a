"""How a release reads: the tables of ``mir models compare``, the lines of ``mir models
check`` (and of a ``mir drift watch`` tick that rolled a canary back) and the outcome of
``mir models promote``, as plain text, whatever renders them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the results are read, never built: no runtime import of their makers
    from mir.releases.compare import ModelComparison
    from mir.releases.evidence import ArmStats
    from mir.releases.gate import Promotion
    from mir.releases.rollback import CanaryCheck


@dataclass(frozen=True)
class Listing:
    """A titled table: a header and rows of cells, all text."""

    title: str
    columns: list[str]
    rows: list[list[str]]


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def amount(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


_ARM_ROWS = (
    ("decisions", lambda a: str(a.decisions)),
    ("valid", lambda a: percent(a.rate("valid"))),
    ("integrity failure", lambda a: percent(a.rate("integrity_failure"))),
    ("fallback", lambda a: percent(a.rate("fallback"))),
    ("override", lambda a: percent(a.rate("override"))),
    ("latency p50", lambda a: amount(a.latency_p50_ms, " ms")),
    ("latency p95", lambda a: amount(a.latency_p95_ms, " ms")),
    ("tokens", lambda a: amount(a.tokens_per_decision)),
)


def comparison_tables(c: ModelComparison) -> list[Listing]:
    """Production vs shadow (when there are pairs), then the arms (when they decided)."""
    tables = []
    s = c.shadow
    if s.pairs:
        p, h = s.production, s.shadow
        rows = [["action agreement", percent(s.action_agreement), ""]]
        rows += [
            [f"agreement: {field}", percent(rate), ""] for field, rate in s.field_agreement.items()
        ]
        rows += [
            ["valid", percent(p.valid_rate), percent(h.valid_rate)],
            ["latency p50", amount(p.latency_p50_ms, " ms"), amount(h.latency_p50_ms, " ms")],
            ["latency p95", amount(p.latency_p95_ms, " ms"), amount(h.latency_p95_ms, " ms")],
            ["tokens", amount(p.tokens_per_decision), amount(h.tokens_per_decision)],
        ]
        title = f"{c.name}: production vs shadow ({s.pairs} paired decisions)"
        tables.append(Listing(title, ["", "production", "shadow"], rows))
    if c.arms:
        arms: list[ArmStats] = sorted(c.arms.values(), key=lambda a: a.arm != "production")
        columns = ["", *(f"{arm.arm} ({arm.version})" for arm in arms)]
        rows = [[label, *(cell(a) for a in arms)] for label, cell in _ARM_ROWS]
        tables.append(Listing(f"{c.name}: arms", columns, rows))
    return tables


def canary_verdict(c: ModelComparison) -> str | None:
    """The canary arm's rollback test in one line (None: no canary decided yet)."""
    if c.canary is None:
        return None
    verdict = "worse: would be rolled back" if c.canary.roll_back else "not worse"
    if not c.canary.enough_data:
        verdict = "not enough decisions to judge"
    return f"canary: {verdict} ({c.canary.evidence()})"


def check_lines(result: CanaryCheck) -> list[str]:
    """The notes, then one line per canary: rolled back or kept, and why."""
    lines = list(result.notes)
    if not result.comparisons:
        lines.append("no canary to check")
    rolled = {r.name for r in result.rolled_back}
    for c in result.comparisons:
        verdict = "rolled back to shadow" if c.name in rolled else "kept"
        if not c.enough_data and c.name not in rolled:
            verdict = "kept (not enough decisions yet)"
        lines.append(f"{c.name}: {verdict}: {c.evidence()}")
    return lines


def promotion_lines(result: Promotion, name: str, version: str, force: bool) -> list[str]:
    """What a promotion says after its gate's report (or its note): refused and why, or
    the new stage (and that it was forced). ``result.entry`` None: it was refused."""
    if result.entry is None:
        failed = result.report is not None and result.report.exit_code
        return [
            f"not promoted: the eval gate failed for {name}@{version}"
            if failed
            else "not promoted: the gate replayed recorded answers (--responses), "
            f"not answers of {name}@{version}",
            "(--force promotes anyway; the history will say so)",
        ]
    forced = ""
    if force and result.report and result.report.exit_code:
        forced = " (forced past a failed gate)"
    elif force and result.replayed:
        forced = " (forced on a replayed gate)"
    return [f"{result.entry.ref} is now {result.entry.stage}{forced}"]
