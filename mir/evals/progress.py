"""What a caller of ``run_eval`` is told while cases run (the CLI draws it: a rich bar
on a terminal, one plain line per finished case run otherwise)."""

from __future__ import annotations

from typing import Protocol

from mir.evals.domain import CaseRun


class EvalProgress(Protocol):
    def start(self, total: int) -> None:
        """``total`` case runs (every case times its repeats, over every suite)."""
        ...

    def advance(self, suite: str, run: CaseRun) -> None:
        """One case run finished (called in the order runs finish, not case order)."""
        ...

    def stop(self, reason: str) -> None:
        """The run stops early (Ctrl-C): the runs in flight finish, nothing new starts."""
        ...

    def finish(self) -> None: ...
