"""``mir eval``'s progress on stderr: a rich bar on a terminal (done/total, passed,
failed, ETA), one plain line per finished case run otherwise (CI logs), with the ETA
too (``mir.evals.progress_lines``: the lines and the ETA's arithmetic)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mir.cli.output import error_console

if TYPE_CHECKING:
    from mir.evals import CaseRun


def eval_progress(*, quiet: bool = False) -> Any:
    """The progress the CLI hands to ``run_eval`` (None: print nothing)."""
    if quiet:
        return None
    if error_console().is_terminal:
        return BarProgress()
    from mir.evals import LineProgress

    return LineProgress(lambda line: error_console().print(line, markup=False, highlight=False))


class BarProgress:
    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.passed = self.failed = 0
        self._bar = Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            console=error_console(),
            transient=True,
        )
        self._task: Any = None
        self.total = self.done = 0
        self.started = time.monotonic()

    def start(self, total: int) -> None:
        self.total, self.started = total, time.monotonic()
        self._bar.start()
        self._task = self._bar.add_task("eval", total=total, passed=0, failed=0, eta="-:--")

    def advance(self, suite: str, run: CaseRun) -> None:
        from mir.evals import eta

        if run.passed:
            self.passed += 1
        else:
            self.failed += 1
        self.done += 1
        left = eta(self.started, self.done, self.total)
        self._bar.update(self._task, advance=1, passed=self.passed, failed=self.failed, eta=left)

    def stop(self, reason: str) -> None:
        from mir.evals import stopping

        self._bar.console.print(stopping(reason), markup=False)

    def finish(self) -> None:
        self._bar.stop()
