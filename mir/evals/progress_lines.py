"""``mir eval``'s plain progress (CI logs, a pipe): one line per finished case run, with
the time left. The lines are handed to ``write``; the caller decides where they go.

The ETA is the mean time per finished run so far times the runs left: rich's own
estimate looks at the last 30 s only, and shows nothing when one decision takes
minutes (the embedded model on a busy machine)."""

from __future__ import annotations

import time
from collections.abc import Callable

from mir.evals.domain import CaseRun
from mir.evals.summary import outcome_words


def eta(started: float, done: int, total: int) -> str:
    """Time left (``m:ss``, ``h:mm:ss`` past an hour) at the mean pace of the runs so
    far; ``-:--`` before the first one ends."""
    if done <= 0:
        return "-:--"
    left = round((time.monotonic() - started) / done * max(total - done, 0))
    hours, rest = divmod(left, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


def stopping(reason: str) -> str:
    return f"{reason}: finishing the runs in flight (Ctrl-C again to stop at once)"


class LineProgress:
    """An ``EvalProgress`` writing ``[done/total] VERDICT suite case #k outcome ms, ETA``."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.total = self.done = self.passed = self.failed = 0
        self.started = time.monotonic()

    def start(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()

    def count(self, run: CaseRun) -> str:
        """Count a finished run (done, passed, failed); the time left after it."""
        self.done += 1
        self.passed += bool(run.passed)
        self.failed += not run.passed
        return eta(self.started, self.done, self.total)

    def advance(self, suite: str, run: CaseRun) -> None:
        left = self.count(run)
        verdict = "ERROR" if run.error else ("pass" if run.passed else "FAIL")
        outcome = outcome_words(run.status, run.action)
        width = len(str(self.total))
        self.write(
            f"[{self.done:>{width}}/{self.total}] {verdict:<5} {suite} {run.case_id}"
            f" #{run.repeat + 1} {outcome} {run.latency_ms:.0f} ms"
            f", ETA {left}"
        )

    def stop(self, reason: str) -> None:
        self.write(stopping(reason))

    def finish(self) -> None:
        pass
