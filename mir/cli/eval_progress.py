"""``mir eval``'s progress on stderr: a rich bar on a terminal (done/total, passed,
failed, ETA), one plain line per finished case run otherwise (CI logs), with the ETA
too (``mir.evals.progress_lines``: the lines and the ETA's arithmetic)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mir.cli.output import error_console, note
from mir.evals import LineProgress

if TYPE_CHECKING:
    from mir.evals import CaseRun


def eval_progress(*, quiet: bool = False) -> Any:
    """The progress the CLI hands to ``run_eval`` (None: print nothing)."""
    if quiet:
        return None
    return BarProgress() if error_console().is_terminal else LineProgress(note)


class BarProgress(LineProgress):
    """``LineProgress``'s counts and ETA drawn as a bar (its ``stop`` line printed above)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        super().__init__(note)
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

    def start(self, total: int) -> None:
        super().start(total)
        self._bar.start()
        self._task = self._bar.add_task("eval", total=total, passed=0, failed=0, eta="-:--")

    def advance(self, suite: str, run: CaseRun) -> None:
        left = self.count(run)
        self._bar.update(self._task, advance=1, passed=self.passed, failed=self.failed, eta=left)

    def finish(self) -> None:
        self._bar.stop()
