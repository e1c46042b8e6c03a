"""``mir run agent NAME --batch FILE``: the batch's progress on stderr (a bar on a
terminal, a line at every tenth of the rows otherwise) and its summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.batch import LineProgress
from mir.cli.output import error_console, print_json, say

if TYPE_CHECKING:
    from mir.batch import RowOutcome


def run_batch_command(inputs: Path, *, as_json: bool, **how: Any) -> None:
    from mir.batch import run_batch, summary_lines

    shown = (_Bar if error_console().is_terminal and not as_json else LineProgress)(_err)
    report = run_batch(how.pop("ref"), inputs, progress=shown, **how)
    if as_json:
        print_json(report.as_json())
    else:
        say(*summary_lines(report, inputs))
    if not report.ended_as_designed:
        raise typer.Exit(code=1)


def _err(line: str) -> None:
    say(line, err=True)


class _Bar(LineProgress):
    """On a terminal: a bar, with the last row's status."""

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
