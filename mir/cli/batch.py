"""``mir run agent NAME --batch FILE``: the batch's progress on stderr (a bar on a
terminal, a line at every tenth of the rows otherwise) and its summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.cli.output import error_console, print_json, say

if TYPE_CHECKING:
    from mir.batch import RowOutcome


def run_batch_command(inputs: Path, *, as_json: bool, **how: Any) -> None:
    from mir.batch import run_batch, summary_lines

    quiet = as_json or not error_console().is_terminal
    report = run_batch(how.pop("ref"), inputs, progress=_Lines() if quiet else _Bar(), **how)
    if as_json:
        print_json(report.as_json())
    else:
        say(*summary_lines(report, inputs))
    if not report.ended_as_designed:
        raise typer.Exit(code=1)


class _Lines:
    """Piped (CI logs): one line on stderr at every tenth of the rows."""

    def start(self, total: int, already: int) -> None:
        self.total, self.done, self.step = total, already, max(1, total // 10)

    def advance(self, outcome: RowOutcome) -> None:
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            say(f"batch: {self.done}/{self.total} rows", err=True)

    def stopping(self) -> None:
        say("stopping: the rows in flight finish (Ctrl-C again stops at once)", err=True)

    def finish(self) -> None: ...


class _Bar(_Lines):
    def start(self, total: int, already: int) -> None:
        from rich import progress as rp

        self._bar = rp.Progress(
            rp.TextColumn("batch"), rp.BarColumn(), rp.MofNCompleteColumn(),
            rp.TextColumn("{task.fields[last]}"), rp.TimeElapsedColumn(),
            rp.TimeRemainingColumn(),
            console=error_console(), transient=True,
        )  # fmt: skip
        self._bar.start()
        self._task = self._bar.add_task("batch", total=total, completed=already, last="")

    def advance(self, outcome: RowOutcome) -> None:
        self._bar.update(self._task, advance=1, last=outcome.status)

    def finish(self) -> None:
        self._bar.stop()
