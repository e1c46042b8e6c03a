"""``mir models compare NAME`` and ``mir models check [NAME]``: a new version's evidence
against production, and the canary's automatic rollback (for cron).

``add_commands(group)`` puts both on the ``mir models`` group (which the registry commands
own); ``register(app)`` makes the group when it does not exist yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.cli.output import (
    chosen_format,
    console,
    format_option,
    json_option,
    literal,
    print_listing,
    project_option,
)
from mir.cli.variadic import VariadicCommand

if TYPE_CHECKING:
    from mir.releases import CanaryCheck, ModelComparison

PROJECT = project_option()
FORMAT = format_option()
JSON = json_option()
SINCE = typer.Option(None, "--since", help="Only decisions of the last 24h, 90m, 7d ...")


def _since(text: str | None) -> Any:
    if text is None:
        return None
    from mir.traces import parse_since

    return parse_since(text)


def add_commands(group: typer.Typer) -> None:
    @group.command("compare")
    def compare_command(
        name: str = typer.Argument(..., help="Registry model name."),
        since: str | None = SINCE,
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> int:
        """Production vs shadow (paired by flow) and production vs canary, from the traces."""
        from mir.releases import compare_model

        fmt = chosen_format(fmt, as_json)
        comparison = compare_model(project, name, _since(since))
        if fmt == "json":
            console().print_json(comparison.model_dump_json())
        else:
            render_comparison(comparison)
        return 0

    @group.command("check", cls=VariadicCommand)
    def check_command(
        names: list[str] | None = typer.Argument(
            None, metavar="NAME", help="Models (default: every canary)."
        ),
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> int:
        """Roll back every canary worse than production (exit 1 when one was)."""
        from mir.releases import check_canaries

        fmt = chosen_format(fmt, as_json)
        result = check_canaries(project, names or None)
        if fmt == "json":
            console().print_json(result.model_dump_json())
        else:
            render_check(result)
        return 1 if result.rolled_back else 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def render_comparison(c: ModelComparison) -> None:
    from rich.table import Table

    out = console()
    for note in c.notes:
        out.print(literal(note))
    s = c.shadow
    if s.pairs:
        table = Table(title=f"{c.name}: production vs shadow ({s.pairs} paired decisions)")
        for column in ("", "production", "shadow"):
            table.add_column(column)
        table.add_row("action agreement", _pct(s.action_agreement), "")
        for field, rate in s.field_agreement.items():
            table.add_row(literal(f"agreement: {field}"), _pct(rate), "")
        p, h = s.production, s.shadow
        table.add_row("valid", _pct(p.valid_rate), _pct(h.valid_rate))
        table.add_row("latency p50", _num(p.latency_p50_ms, " ms"), _num(h.latency_p50_ms, " ms"))
        table.add_row("latency p95", _num(p.latency_p95_ms, " ms"), _num(h.latency_p95_ms, " ms"))
        table.add_row("tokens", _num(p.tokens_per_decision), _num(h.tokens_per_decision))
        print_listing(table)
    if c.arms:
        arms = sorted(c.arms.values(), key=lambda a: a.arm != "production")
        table = Table(title=f"{c.name}: arms")
        table.add_column("")
        for arm in arms:
            table.add_column(literal(f"{arm.arm} ({arm.version})"))
        rows: list[tuple[str, Any]] = [
            ("decisions", lambda a: str(a.decisions)),
            ("valid", lambda a: _pct(a.rate("valid"))),
            ("integrity failure", lambda a: _pct(a.rate("integrity_failure"))),
            ("fallback", lambda a: _pct(a.rate("fallback"))),
            ("override", lambda a: _pct(a.rate("override"))),
            ("latency p50", lambda a: _num(a.latency_p50_ms, " ms")),
            ("latency p95", lambda a: _num(a.latency_p95_ms, " ms")),
            ("tokens", lambda a: _num(a.tokens_per_decision)),
        ]
        for label, cell in rows:
            table.add_row(label, *(cell(a) for a in arms))
        print_listing(table)
    if c.canary is not None:
        verdict = "worse: would be rolled back" if c.canary.roll_back else "not worse"
        if not c.canary.enough_data:
            verdict = "not enough decisions to judge"
        out.print(literal(f"canary: {verdict} ({c.canary.evidence()})"))


def render_check(result: CanaryCheck) -> None:
    out = console()
    for note in result.notes:
        out.print(literal(note))
    if not result.comparisons:
        out.print("no canary to check")
    rolled = {r.name for r in result.rolled_back}
    for c in result.comparisons:
        verdict = "rolled back to shadow" if c.name in rolled else "kept"
        if not c.enough_data and c.name not in rolled:
            verdict = "kept (not enough decisions yet)"
        out.print(literal(f"{c.name}: {verdict}: {c.evidence()}"))
