"""``mir eval``'s progress on stderr: a rich bar on a terminal (done/total, passed,
failed, ETA), one plain line per finished case run otherwise (CI logs), with the ETA too.

The ETA is the mean time per finished run so far times the runs left: rich's own
estimate looks at the last 30 s only, and shows nothing when one decision takes
minutes (the embedded model on a busy machine)."""

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
    return BarProgress() if error_console().is_terminal else LineProgress()


def outcome_words(status: str | None, action: str | None) -> str:
    """A run's outcome in plain words: nothing executes in an eval, so a decision the
    pipeline accepted "would execute"."""
    act = action or "no action"
    if status == "executed":
        return f"would execute {act}"
    if status == "pending_review":
        return f"{act}, to review"
    if status == "fallback":
        return f"fallback: {act}"
    if status is None:
        return "no decision"
    return f"{status}: {act}" if action else status


def eta(started: float, done: int, total: int) -> str:
    """Time left (``m:ss``, ``h:mm:ss`` past an hour) at the mean pace of the runs so
    far; ``-:--`` before the first one ends. Rich's own estimate only counts the last 30
    s of progress, so with 1-3 minute decisions it never showed a number."""
    if done <= 0:
        return "-:--"
    left = round((time.monotonic() - started) / done * max(total - done, 0))
    hours, rest = divmod(left, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


class LineProgress:
    def __init__(self) -> None:
        self.total = self.done = 0
        self.started = time.monotonic()

    def start(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()

    def advance(self, suite: str, run: CaseRun) -> None:
        self.done += 1
        verdict = "ERROR" if run.error else ("pass" if run.passed else "FAIL")
        outcome = outcome_words(run.status, run.action)
        width = len(str(self.total))
        line = (
            f"[{self.done:>{width}}/{self.total}] {verdict:<5} {suite} {run.case_id}"
            f" #{run.repeat + 1} {outcome} {run.latency_ms:.0f} ms"
            f", ETA {eta(self.started, self.done, self.total)}"
        )
        error_console().print(line, markup=False, highlight=False)

    def stop(self, reason: str) -> None:
        error_console().print(
            f"{reason}: finishing the runs in flight (Ctrl-C again to stop at once)",
            markup=False,
        )

    def finish(self) -> None:
        pass


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
        if run.passed:
            self.passed += 1
        else:
            self.failed += 1
        self.done += 1
        left = eta(self.started, self.done, self.total)
        self._bar.update(self._task, advance=1, passed=self.passed, failed=self.failed, eta=left)

    def stop(self, reason: str) -> None:
        self._bar.console.print(
            f"{reason}: finishing the runs in flight (Ctrl-C again to stop at once)",
            markup=False,
        )

    def finish(self) -> None:
        self._bar.stop()
