"""``mir eval``: run agents' regression suites through the runtime and gate CI.

Exit codes: 0 every suite's gate passed (a difference within noise says so), 1 a gate
failed (a significant regression, a broken critical case, a pass rate below the floor),
2 a usage or config error (nothing ran), 130 stopped by Ctrl-C (partial results shown).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli import eval_calibrate, eval_history
from mir.cli.output import (
    chosen_format,
    console,
    format_option,
    json_option,
    note,
    print_rows,
    say,
    say_parts,
)
from mir.cli.variadic import VariadicCommand, default_group

if TYPE_CHECKING:
    from mir.evals import EvalReport, SuiteResult

FORMATS = ("table", "json", "junit")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        # the group's other commands (history, calibrate) are named first; anything else
        # is a run
        cls=default_group("run"),
        help="Run eval suites (evals/*.yaml) through the runtime; exit 1 on a regression. "
        "`mir eval [TARGETS] [OPTIONS]` is `mir eval run ...` (options: `mir eval run --help`).",
    )

    @group.command("run", cls=VariadicCommand)
    def eval_command(
        targets: list[str] | None = typer.Argument(
            None,
            metavar="TARGET",
            help="Suite files, folders, or CAPABILITY.AGENT (default: every "
            "capabilities/*/evals/*.yaml of the project).",
            show_default=False,
        ),
        jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Worker processes."),
        repeat: int | None = typer.Option(
            None, "--repeat", help="Runs per case, 1 to 100 (pass^k, pass@k, flaky cases)."
        ),
        provider: str | None = typer.Option(
            None, "--provider", help="Override routes: llama, litellm, scripted or rules."
        ),
        model: str | None = typer.Option(None, "--model", help="Override the routes' model."),
        responses: Path | None = typer.Option(
            None,
            "--responses",
            dir_okay=False,
            help="Replay: JSONL of raw model outputs, one line per case run in case order.",
        ),
        no_cache: bool = typer.Option(
            False, "--no-cache", help="Ask the model even when .mir/cache has the answer."
        ),
        update_baseline: bool = typer.Option(
            False,
            "--update-baseline",
            help="Write evals/baselines/<suite>.json (one per suite) from this run.",
        ),
        fmt: str | None = format_option(FORMATS, short=True),
        as_json: bool = json_option(),
        html: Path | None = typer.Option(
            None, "--html", dir_okay=False, help="Also write a self-contained HTML report."
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Say in full why the judge does not gate."
        ),
        project: Path | None = typer.Option(
            None, "--project", file_okay=False, help="Project folder (default: from the cwd)."
        ),
    ) -> None:
        """Run eval suites: every case through the real pipeline (nothing executes), then
        the gate against the committed baseline."""
        from mir.cli.eval_progress import eval_progress
        from mir.errors import UsageError
        from mir.evals import evaluate

        if fmt is not None and fmt not in FORMATS:
            raise UsageError(
                f"--format: unknown format {fmt!r}",
                hint="table, json or junit; an HTML report is --html FILE, beside any format",
            )
        fmt = chosen_format(fmt, as_json, FORMATS)
        done = evaluate(
            targets or (), show=lambda report: render(report, fmt, verbose=verbose), say=note,
            html=html, update_baseline=update_baseline, project=project, provider=provider,
            model=model, responses=responses, jobs=jobs, repeat=repeat, cache=not no_cache,
            progress=eval_progress(quiet=quiet),
        )  # fmt: skip
        if done.exit_code:
            raise typer.Exit(done.exit_code)

    # the other parts of `mir eval`: run history, judge calibration
    eval_history.register(group)
    eval_calibrate.register(group)
    app.add_typer(group, name="eval")


def render(report: EvalReport, fmt: str, *, verbose: bool = False) -> None:
    if fmt in ("json", "junit"):
        from mir.evals import render_report

        console().file.write(render_report(report, fmt) + "\n")
    else:
        for suite in report.suites:
            render_suite(suite, verbose=verbose)


def render_suite(suite: SuiteResult, *, verbose: bool = False) -> None:
    from rich.text import Text

    from mir.evals import suite_view

    view = suite_view(suite, verbose=verbose)
    out = console()
    out.print(Text(view.heading, style="bold"))
    print_rows(view.columns, view.rows, wrap=("first failure",))
    for text, style in view.notes:
        out.print(Text(text, style=style))
    say_parts(*view.verdict)
    say(*view.reasons)
    out.print()
