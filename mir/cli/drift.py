"""``mir drift``: drift metrics per agent, the breaker (``check``, ``watch``), frozen
references (``snapshot``) and a metric's history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from mir.cli.output import console, error_console, literal, print_listing

if TYPE_CHECKING:
    from mir.drift import DriftReport, HistoryPoint, WindowOptions

PROJECT = typer.Option(
    None, "--project", file_okay=False, help="Project folder (default: found from the cwd)."
)
FORMAT = typer.Option("table", "--format", help="table or json.")
AGENTS = typer.Argument(None, help="Agents (capability.agent, or the name alone); default: all.")
WINDOW = typer.Option(None, "--window", help="Current window: the last 24h (default), 90m, 2d ...")
REFERENCE = typer.Option(
    None,
    "--reference",
    help="Reference: a duration ending where the window starts (default 7d), or the name of "
    "a frozen reference (`mir drift snapshot`).",
)
LAST = typer.Option(None, "--last", help="Current window: the last N decisions instead.")
REFERENCE_LAST = typer.Option(
    None, "--reference-last", help="Reference: the M decisions before them (default 10 x N)."
)
ALL = typer.Option(False, "--all", help="Show every metric, not only the ones that moved.")
RUBRICS = typer.Option(
    False,
    "--rubrics",
    help="Also grade a sample of each window's decisions with the judge against the "
    "contract's drift rubrics (calls a model; answers are cached in .mir/cache).",
)
HTML = typer.Option(
    None, "--html", dir_okay=False, help="Also write the report as one HTML page to this file."
)
SPARK = "▁▂▃▄▅▆▇█"
_VERDICT_STYLE = {
    "suspend": "bold red",
    "warn": "yellow",
    "ok": "green",
    "not_enough_data": "dim",
    "info": "dim",
}


class _DefaultGroup(TyperGroup):
    """``mir drift [AGENT ...]`` shows metrics; ``mir drift check|watch|...`` are commands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["show", *args]
        return super().parse_args(ctx, args)


def _options(
    window: str | None,
    reference: str | None,
    last: int | None,
    reference_last: int | None,
    rubrics: bool = False,
) -> WindowOptions:
    from mir.drift import WindowOptions

    return WindowOptions(
        window=window,
        reference=reference,
        last=last,
        reference_last=reference_last,
        rubrics=rubrics,
    )


def _check_format(fmt: str) -> None:
    if fmt not in ("table", "json"):
        from mir.errors import UsageError

        raise UsageError(f"unknown --format {fmt!r}", hint="table or json")


def _tick(report: DriftReport, fmt: str, project: Path | None) -> None:
    """One `mir drift watch` tick: the drift report, then the canaries' rollback check (a
    problem with the canaries is a line on stderr, never the end of the watch)."""
    render(report, fmt, show_all=False, brief=True)
    from mir.cli.models_canary import render_check
    from mir.releases import check_canaries

    try:
        result = check_canaries(project)
    except Exception as exc:  # the breaker keeps watching the agents
        error_console().print(literal(f"canary check failed: {exc}"))
        return
    if result.rolled_back:
        if fmt == "json":
            console().print_json(result.model_dump_json())
        else:
            render_check(result)


def register(app: typer.Typer) -> None:
    drift = typer.Typer(
        cls=_DefaultGroup,
        help="Drift of agents' decisions (current vs reference window), and the breaker "
        "that suspends a drifting agent. `mir drift [AGENT ...] [--window 24h --reference 7d "
        "| --last N --reference-last M | --reference NAME] [--format json] [--html FILE]` "
        "shows the metrics (exit 1 when an agent is past a suspend level); `mir drift show "
        "--help` lists every option.",
    )

    @drift.command("show", hidden=True)
    def show_command(
        agents: list[str] | None = AGENTS,
        window: str | None = WINDOW,
        reference: str | None = REFERENCE,
        last: int | None = LAST,
        reference_last: int | None = REFERENCE_LAST,
        fmt: str = FORMAT,
        show_all: bool = ALL,
        html: Path | None = HTML,
        rubrics: bool = RUBRICS,
        project: Path | None = PROJECT,
    ) -> int:
        """Drift metrics per agent, grouped by kind; exit 1 when one is past a suspend level."""
        from mir.drift import measure

        _check_format(fmt)
        report = measure(
            project, agents or [], _options(window, reference, last, reference_last, rubrics)
        )
        render(report, fmt, show_all=show_all)
        _write_html(report, html)
        return 1 if report.past_suspend else 0

    @drift.command("check")
    def check_command(
        agents: list[str] | None = AGENTS,
        window: str | None = WINDOW,
        reference: str | None = REFERENCE,
        last: int | None = LAST,
        reference_last: int | None = REFERENCE_LAST,
        fmt: str = FORMAT,
        show_all: bool = ALL,
        html: Path | None = HTML,
        rubrics: bool = RUBRICS,
        project: Path | None = PROJECT,
    ) -> int:
        """The breaker (for cron, CI, a systemd timer): suspend every agent past a suspend
        level, alert ([tool.mir.alerts]); exit 1 when one was past it."""
        from mir.drift import check

        _check_format(fmt)
        report = check(
            project, agents or [], _options(window, reference, last, reference_last, rubrics)
        )
        render(report, fmt, show_all=show_all)
        _write_html(report, html)
        return 1 if report.past_suspend else 0

    @drift.command("watch")
    def watch_command(
        agents: list[str] | None = AGENTS,
        every: str = typer.Option("60s", "--every", help="How often to check: 30s, 5m ..."),
        iterations: int | None = typer.Option(
            None, "--iterations", min=1, help="Stop after N checks (default: until Ctrl-C)."
        ),
        window: str | None = WINDOW,
        reference: str | None = REFERENCE,
        last: int | None = LAST,
        reference_last: int | None = REFERENCE_LAST,
        fmt: str = FORMAT,
        rubrics: bool = RUBRICS,
        project: Path | None = PROJECT,
    ) -> int:
        """A rolling breaker: `check` every --every, in its own process (decisions never
        wait for it)."""
        from mir.drift import parse_duration, watch

        _check_format(fmt)
        period = parse_duration(every, "--every").total_seconds()
        options = _options(window, reference, last, reference_last, rubrics)
        return watch(
            project,
            agents or [],
            options,
            period,
            iterations,
            lambda report: _tick(report, fmt, project),
        )

    @drift.command("snapshot")
    def snapshot_command(
        agent: str = typer.Argument(help="The agent whose decisions to freeze."),
        name: str = typer.Argument(help="A name for the frozen reference, e.g. 'baseline'."),
        window: str | None = typer.Option(
            None, "--window", help="Freeze the decisions of this last span (default 7d)."
        ),
        last: int | None = typer.Option(None, "--last", help="Or the last N decisions."),
        project: Path | None = PROJECT,
    ) -> None:
        """Freeze a reference window; compare with it later with `--reference NAME`."""
        from mir.drift import WindowOptions, snapshot

        options = WindowOptions(window=window or (None if last else "7d"), last=last)
        frozen = snapshot(agent, name, project, options)
        console().print(
            literal(
                f"froze {frozen.decisions} decisions of {agent} as {name!r} "
                f"({frozen.start:%Y-%m-%d %H:%M} .. {frozen.end:%Y-%m-%d %H:%M})"
            )
        )

    @drift.command("history")
    def history_command(
        agent: str = typer.Argument(help="The agent."),
        metric: str | None = typer.Argument(None, help="One metric (default: all recorded)."),
        limit: int = typer.Option(500, "--limit", min=1, help="The last N recorded values."),
        fmt: str = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """A metric over time, from every recorded `mir drift` / `check` run."""
        from mir.drift import history

        _check_format(fmt)
        points = history(agent, metric, project, limit)
        if fmt == "json":
            typer.echo(json.dumps([p.model_dump(mode="json") for p in points], indent=2))
            return
        render_history(points)

    app.add_typer(drift, name="drift")


def _write_html(report: DriftReport, target: Path | None) -> None:
    if target is None:
        return
    from mir.cli.drift_html import page
    from mir.errors import UsageError

    try:
        target.write_text(page(report), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --html {target} ({exc.strerror})") from exc


# ---------------------------------------------------------------------------- rendering
def sparkline(values: list[float | None]) -> str:
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


def _histogram(shares: list[float]) -> str:
    if not shares:
        return ""
    top = max(shares) or 1.0
    return "".join(SPARK[min(len(SPARK) - 1, int(s / top * (len(SPARK) - 1)))] for s in shares)


def _number(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    if metric.startswith("rate.") or metric == "limits.hugging":
        return f"{value:.1%}"
    return f"{value:.4g}"


def render(report: DriftReport, fmt: str, *, show_all: bool, brief: bool = False) -> None:
    if fmt == "json":
        typer.echo(report.model_dump_json(indent=2))
        return
    from rich.table import Table
    from rich.text import Text

    from mir.drift import KINDS

    out = console()
    for note in report.notes:
        error_console().print(literal(note))
    for agent in report.agents:
        verdict = agent.verdict
        head = Text.assemble(
            (agent.agent, "bold"),
            "  ",
            (verdict.upper(), _VERDICT_STYLE.get(verdict, "")),
            ("  SUSPENDED by the breaker" if agent.suspended else "", "bold red"),
            f"  current {agent.current.label} ({agent.current.decisions} decisions) vs "
            f"reference {agent.reference.label} ({agent.reference.decisions} decisions)",
        )
        out.print(head)
        if brief:
            for metric in agent.tripped("suspend") + agent.tripped("warn"):
                out.print(literal(f"  {metric.verdict}: {metric.metric} = {metric.value:.4g}"))
            continue
        for kind in KINDS:
            rows = [
                m
                for m in agent.metrics
                if m.kind == kind and (show_all or m.verdict in ("warn", "suspend"))
            ]
            if not rows:
                continue
            table = Table(title=f"{kind} drift", title_justify="left", show_edge=False)
            for column in (
                "metric",
                "reference",
                "current",
                "value",
                "p",
                "warn/suspend",
                "verdict",
                "histogram ref | cur",
                "detail",
            ):
                table.add_column(column)
            for m in rows:
                levels = f"{_number(m.warn, m.metric)}/{_number(m.suspend, m.metric)}"
                if m.metric.startswith("rate.") or m.metric == "limits.hugging":
                    levels = f"{_number(m.warn, 'x')}/{_number(m.suspend, 'x')}"
                table.add_row(
                    literal(m.metric),
                    literal(_number(m.reference, m.metric)),
                    literal(_number(m.current, m.metric)),
                    literal(_number(m.value, "x")),
                    literal("-" if m.p_value is None else f"{m.p_value:.2g}"),
                    literal(levels),
                    literal(m.verdict.replace("_", " "), _VERDICT_STYLE.get(m.verdict, "")),
                    literal(
                        f"{_histogram(m.reference_histogram)} | {_histogram(m.current_histogram)}"
                        if m.reference_histogram
                        else ""
                    ),
                    literal(m.detail),
                )
            print_listing(table)
        if agent.likely_causes:
            out.print(literal("likely causes: " + "; ".join(agent.likely_causes)))
        for m in agent.metrics:
            if m.family == "rubric" and m.verdict == "info" and not show_all:
                out.print(literal(f"  {m.metric}: {m.detail}"))
        if not show_all and not (agent.tripped("warn") or agent.tripped("suspend")):
            out.print(literal(f"  {len(agent.metrics)} metrics, none moved (--all to list them)"))


def render_history(points: list[HistoryPoint]) -> None:
    from rich.table import Table

    if not points:
        console().print("no drift runs recorded yet (run `mir drift` or `mir drift check`)")
        return
    by_metric: dict[str, list[HistoryPoint]] = {}
    for point in points:
        by_metric.setdefault(point.metric, []).append(point)
    table = Table(show_edge=False)
    for column in ("metric", "kind", "runs", "first", "last", "latest", "verdict", "trend"):
        table.add_column(column)
    for metric, series in by_metric.items():
        latest = series[-1]
        table.add_row(
            literal(metric),
            literal(latest.kind),
            literal(len(series)),
            literal(f"{series[0].at:%Y-%m-%d %H:%M}"),
            literal(f"{latest.at:%Y-%m-%d %H:%M}"),
            literal(_number(latest.value, "x")),
            literal(latest.verdict.replace("_", " "), _VERDICT_STYLE.get(latest.verdict, "")),
            literal(sparkline([p.value for p in series[-40:]])),
        )
    print_listing(table)
