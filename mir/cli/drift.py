"""``mir drift``: drift metrics per agent, the breaker (``check``, ``watch``), frozen
references (``snapshot``) and a metric's history."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.cli.drift_render import render, render_history
from mir.cli.options import FORMAT, JSON, METRICS, PROJECT
from mir.cli.output import chosen_format, console, print_models, say
from mir.cli.variadic import VariadicCommand, default_group

if TYPE_CHECKING:
    from mir.drift import DriftReport, WindowOptions
    from mir.releases import CanaryCheck

AGENTS = typer.Argument(
    None, metavar="AGENT", help="Agents (capability.agent, or the name alone); default: all."
)
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


def _options(
    window: str | None,
    reference: str | None,
    last: int | None,
    reference_last: int | None,
    rubrics: bool = False,
) -> WindowOptions:
    from mir.drift import WindowOptions

    return WindowOptions(
        window=window, reference=reference, last=last, reference_last=reference_last,
        rubrics=rubrics,
    )  # fmt: skip


def _watch_renderers(fmt: str) -> tuple[Any, Any]:
    """What each `mir drift watch` tick shows: its time (the JSON report carries it as
    ``at``) and the brief drift report, then a rollback of a canary, if one was rolled
    back (a failed canary check is a line on stderr: the watch goes on)."""

    def on_report(report: DriftReport) -> None:
        if fmt != "json":
            say(f"-- check at {report.at:%Y-%m-%d %H:%M:%S} UTC")
        render(report, fmt, show_all=False, brief=True)

    def on_canaries(result: CanaryCheck | None, error: str | None) -> None:
        from mir.releases import check_lines

        if result is None:
            say(f"canary check failed: {error}", err=True)
        elif result.rolled_back and fmt == "json":
            console().print_json(result.model_dump_json())
        elif result.rolled_back:
            say(*check_lines(result))

    return on_report, on_canaries


def register(app: typer.Typer) -> None:
    drift = typer.Typer(
        # `mir drift [AGENT ...]` shows metrics; `mir drift check|watch|...` are commands
        cls=default_group("show"),
        help="Drift of agents' decisions (current vs reference window), and the breaker "
        "that suspends a drifting agent. `mir drift [AGENT ...] [--window 24h --reference 7d "
        "| --last N --reference-last M | --reference NAME] [--format json] [--html FILE]` "
        "shows the metrics (exit 1 when an agent is past a suspend level); `mir drift show "
        "--help` lists every option.",
    )

    def measure_command(
        ctx: typer.Context,
        agents: list[str] | None = AGENTS,
        window: str | None = WINDOW,
        reference: str | None = REFERENCE,
        last: int | None = LAST,
        reference_last: int | None = REFERENCE_LAST,
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        show_all: bool = ALL,
        html: Path | None = HTML,
        rubrics: bool = RUBRICS,
        project: Path | None = PROJECT,
    ) -> int:
        """`show` measures; `check` measures and runs the breaker: the same options."""
        from mir.drift import check, measure, write_html

        fmt = chosen_format(fmt, as_json)
        run = check if ctx.info_name == "check" else measure
        report = run(
            project, agents or [], _options(window, reference, last, reference_last, rubrics)
        )
        render(report, fmt, show_all=show_all)
        if html is not None:
            write_html(report, html)
        return 1 if report.past_suspend else 0

    show_help = "Drift metrics per agent, grouped by kind; exit 1 when one is past a suspend level."
    drift.command("show", hidden=True, cls=VariadicCommand, help=show_help)(measure_command)
    check_help = (
        "The breaker (for cron, CI, a systemd timer): suspend every agent past a suspend\n"
        "level, alert ([tool.mir.alerts]); exit 1 when one was past it."
    )
    drift.command("check", cls=VariadicCommand, help=check_help)(measure_command)

    @drift.command("watch", cls=VariadicCommand)
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
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        rubrics: bool = RUBRICS,
        metrics: str | None = METRICS,
        project: Path | None = PROJECT,
    ) -> int:
        """A rolling breaker: `check` every --every, in its own process (decisions never
        wait for it)."""
        from mir.drift import parse_duration
        from mir.metrics import exposed
        from mir.releases import watch_with_canaries

        fmt = chosen_format(fmt, as_json)
        period = parse_duration(every, "--every").total_seconds()
        options = _options(window, reference, last, reference_last, rubrics)
        with exposed(metrics, project):  # counting and /metrics while it watches
            return watch_with_canaries(
                project, agents or [], options, period, iterations, *_watch_renderers(fmt)
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
        from mir.drift import WindowOptions, frozen_line, snapshot

        options = WindowOptions(window=window or (None if last else "7d"), last=last)
        frozen = snapshot(agent, name, project, options)
        say(frozen_line(frozen, agent, name))

    @drift.command("history")
    def history_command(
        agent: str = typer.Argument(help="The agent."),
        metric: str | None = typer.Argument(None, help="One metric (default: all recorded)."),
        limit: int = typer.Option(500, "--limit", min=1, help="The last N recorded values."),
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> None:
        """A metric over time, from every recorded `mir drift` / `check` run."""
        from mir.drift import history

        fmt = chosen_format(fmt, as_json)
        points = history(agent, metric, project, limit)
        if fmt == "json":
            print_models(points, ascii=True)
            return
        render_history(points)

    app.add_typer(drift, name="drift")
