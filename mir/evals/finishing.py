"""``mir eval``'s use case from the parsed options to the exit code: run the suites,
show the report, then what follows it (the HTML report, what ``--update-baseline``
did, the run history), in that order.

The report is handed to ``show`` before the history is written: a busy or damaged
history file costs a warning (``say``), never the report. What the run warned of on
the way (``--responses`` lines left over) is said before the report: it may explain
the results."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.evals.domain import EvalReport, ReplayLinesLeftOver
from mir.evals.summary import baseline_notes

INTERRUPTED = 130  # 128 + SIGINT: stopped by Ctrl-C, partial results shown


@dataclass(frozen=True)
class Evaluated:
    report: EvalReport
    exit_code: int  # 0 every gate passed, 1 one failed, 130 interrupted


def evaluate(
    targets: Sequence[str | Path],
    *,
    show: Callable[[EvalReport], None],
    say: Callable[[str], None],
    html: Path | None = None,
    update_baseline: bool = False,
    project: Path | None = None,
    **run: Any,
) -> Evaluated:
    """Run the suites (``run``: ``run_eval``'s options), ``show`` the report, write the
    HTML report to ``html``, and record the run in the project's history; every line
    for the user besides the report goes to ``say``."""
    from mir.evals.api import html_report, record_history, run_eval
    from mir.storage import output_file

    if html is not None:
        output_file(html, "--html")  # refused before anything runs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReplayLinesLeftOver)
        report = run_eval(
            targets, project=project, update_baseline=update_baseline, record=False, **run
        )
    for caught_warning in caught:
        if issubclass(caught_warning.category, ReplayLinesLeftOver):
            say(f"warning: {caught_warning.message}")
        else:  # not ours to word: shown as Python would have shown it
            warnings.showwarning(
                caught_warning.message,
                caught_warning.category,
                caught_warning.filename,
                caught_warning.lineno,
            )
    show(report)
    if html is not None:
        html.write_text(html_report(report, project=project), encoding="utf-8")
        say(f"wrote {html}")
    if update_baseline:
        for line in baseline_notes(report):
            say(line)
    problem = record_history(report, project=project)
    if problem is not None:
        say(f"warning: {problem}")
    interrupted = any(suite.interrupted for suite in report.suites)
    return Evaluated(report, INTERRUPTED if interrupted else report.exit_code)
