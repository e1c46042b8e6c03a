"""``mir eval``: run agents' regression suites through the runtime and gate CI.

Exit codes: 0 every suite's gate passed (a difference within noise says so), 1 a gate
failed (a significant regression, a broken critical case, a pass rate below the floor),
2 a usage or config error (nothing ran), 130 stopped by Ctrl-C (partial results shown).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

from mir.cli.eval_progress import outcome_words
from mir.cli.output import (
    chosen_format,
    console,
    error_console,
    format_option,
    json_option,
    literal,
    print_listing,
)
from mir.cli.variadic import VariadicCommand

if TYPE_CHECKING:
    from mir.evals import EvalReport, SuiteResult

FORMATS = ("table", "json", "junit")
INTERRUPTED = 130


class _RunByDefault(TyperGroup):
    """``mir eval [TARGETS] [OPTIONS]`` is ``mir eval run ...``: the group's other commands
    (``history``, ``calibrate``) are named first; anything else is a run."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        elif not args:
            args = ["run"]
        return super().parse_args(ctx, args)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        cls=_RunByDefault,
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
        from mir.evals import ReplayLinesLeftOver, run_eval

        if fmt is not None and fmt not in FORMATS:
            raise UsageError(
                f"--format: unknown format {fmt!r}",
                hint="table, json or junit; an HTML report is --html FILE, beside any format",
            )
        fmt = chosen_format(fmt, as_json, FORMATS)
        if html is not None:
            from mir.cli.paths import output_file

            output_file(html, "--html")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ReplayLinesLeftOver)
            report = run_eval(
                targets or (),
                project=project,
                provider=provider,
                model=model,
                responses=responses,
                jobs=jobs,
                repeat=repeat,
                cache=not no_cache,
                update_baseline=update_baseline,
                progress=eval_progress(quiet=quiet),
                record=False,  # after the report is shown: a history problem never hides it
            )
        for caught_warning in caught:  # before the report: it may explain the results
            if not issubclass(caught_warning.category, ReplayLinesLeftOver):
                warnings.showwarning(
                    caught_warning.message,
                    caught_warning.category,
                    caught_warning.filename,
                    caught_warning.lineno,
                )
                continue
            message = str(caught_warning.message)
            error_console().print(f"warning: {message}", markup=False, highlight=False)
        render(report, fmt, verbose=verbose)
        if html is not None:
            _write_html(report, html, project)
        if update_baseline:
            _said_baselines(report)
        from mir.evals import record_history

        problem = record_history(report, project=project)
        if problem is not None:
            error_console().print(f"warning: {problem}", markup=False, highlight=False)
        if any(suite.interrupted for suite in report.suites):
            raise typer.Exit(INTERRUPTED)
        if report.exit_code:
            raise typer.Exit(report.exit_code)

    _register_parts(group)
    app.add_typer(group, name="eval")


def _register_parts(group: typer.Typer) -> None:
    """The other parts of ``mir eval`` (run history, judge calibration)."""
    from mir.cli import eval_calibrate, eval_history

    eval_history.register(group)
    eval_calibrate.register(group)


def render(report: EvalReport, fmt: str, *, verbose: bool = False) -> None:
    if fmt in ("json", "junit"):
        from mir.evals import render_report

        console().file.write(render_report(report, fmt) + "\n")
    else:
        for suite in report.suites:
            render_suite(suite, verbose=verbose)


def render_suite(suite: SuiteResult, *, verbose: bool = False) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    title = f"{suite.agent}  {suite.suite}"
    model = f"{suite.provider or '-'} / {suite.model or '-'}"
    out.print(Text(f"{title}  ({model})", style="bold"))
    first: dict[str, str] = {}
    outcome: dict[str, str] = {}
    for run in suite.runs:
        outcome.setdefault(run.case_id, outcome_words(run.status, run.action))
        if not run.passed and run.case_id not in first:
            first[run.case_id] = run.error or next(
                (a.message for a in run.assertions if a.gating and a.passed is not True), ""
            )
    table = Table(box=None, pad_edge=False)
    repeated = any(case.runs > 1 for case in suite.cases)
    columns = ["case", "runs", "passed", *(["pass^k", "pass@k"] if repeated else [])]
    for column in (*columns, "outcome", "change", "first failure"):
        table.add_column(column, no_wrap=column != "first failure")
    for case in suite.cases:
        style = "green" if case.pass_all else ("yellow" if case.pass_any else "red")
        each = [
            literal(_yes(case.pass_all), style="green" if case.pass_all else "red"),
            literal(_yes(case.pass_any), style="green" if case.pass_any else "red"),
        ]
        table.add_row(
            literal(case.case_id),
            str(case.runs),
            literal(f"{case.passes}/{case.runs}", style=style),
            *(each if repeated else []),
            literal(outcome.get(case.case_id)),
            literal(_change_words(case.change), style="red" if case.change == "broken" else ""),
            literal(first.get(case.case_id, "")),
        )
    print_listing(table)
    if repeated:
        cases = len(suite.cases)
        every = sum(c.pass_all for c in suite.cases)
        some = sum(c.pass_any for c in suite.cases)
        out.print(
            f"pass^k (every run passed): {every}/{cases} cases; "
            f"pass@k (one run passed): {some}/{cases} cases"
        )
    if suite.flaky:
        out.print(Text("flaky: " + ", ".join(suite.flaky), style="yellow"))
    if suite.comparison is not None:
        c = suite.comparison
        for label, ids in (("broken", c.broken), ("fixed", c.fixed)):
            if ids:
                out.print(Text(f"{label}: {', '.join(ids)}"))
    if suite.confidence is not None and suite.confidence.ece is not None:
        conf = suite.confidence
        sent = (
            f", {conf.wrong_sent_to_review:.0%} of wrong decisions sent to review"
            if conf.wrong_sent_to_review is not None
            else ""
        )
        out.print(f"confidence ({conf.source}): ECE {conf.ece:.3f}{sent}")
    gate = suite.gate
    verdict = Text("gate: passed" if gate.passed else "gate: FAILED", style="bold")
    verdict.stylize("green" if gate.passed else "red")
    if suite.interrupted:
        verdict.append("  (interrupted: partial results)", style="yellow")
    out.print(verdict)
    for reason in gate.reasons:
        out.print(Text(f"  {reason}"))
    judge = _judge_line(suite, verbose=verbose)
    if judge:
        out.print(Text(f"  {judge}"))
    out.print()


def _judge_line(suite: SuiteResult, *, verbose: bool) -> str:
    """One short line on the judge (its position consistency, whether it gated); the
    full reason it did not gate with ``-v``."""
    parts = []
    if suite.position_consistency is not None:
        parts.append(f"position consistency {suite.position_consistency:.0%}")
    note = suite.gate.judge_note
    if note and verbose:
        parts.append(f"reported, not gating: {note}")
    elif note:
        why = note.split(":", 1)[0].removeprefix("judge ")
        parts.append(f"reported, not gating ({why}; -v says why)")
    return "judge: " + "; ".join(parts) if parts else ""


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _change_words(change: str | None) -> str | None:
    return change.replace("_", " ") if change else change


def _write_html(report: EvalReport, path: Path, project: Path | None) -> None:
    from mir.evals import html_report

    path.write_text(html_report(report, project=project), encoding="utf-8")
    error_console().print(f"wrote {path}", markup=False, highlight=False)


def _said_baselines(report: EvalReport) -> None:
    for suite in report.suites:
        if suite.interrupted:
            note = "interrupted: baseline NOT updated"
        else:
            note = "baseline updated (commit evals/baselines/)"
            failing = sum(not case.pass_all for case in suite.cases)
            if failing:
                cases = (
                    "case recorded as a known failure"
                    if failing == 1
                    else ("cases recorded as known failures")
                )
                note += f"; {failing} failing {cases}: later runs report it as still failing"
        error_console().print(f"{suite.suite}: {note}", markup=False, highlight=False)
