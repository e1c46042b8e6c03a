"""The case runs of one ``mir eval``, in case order, made as they are taken.

Runs are never built all up front: ``Tasks`` knows how many there are (for progress,
replay-line checks and the interrupted count) and makes each ``Task`` when a worker
takes it, so memory does not grow with cases x repeats. Task ``i`` of the iteration has
number ``i``; a suite's runs are one contiguous range of numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from mir.errors import UsageError
from mir.evals.discovery import SuiteFile
from mir.evals.domain import Baseline, ReplayLinesLeftOver
from mir.evals.runner import Task
from mir.inference import ModelResponse


@dataclass(frozen=True)
class Tasks:
    """Every case run over the selected suites, in case order (re-iterable)."""

    suites: Sequence[SuiteFile]
    baselines: Sequence[Baseline | None]
    gating: Sequence[tuple[bool, str | None]]
    later: Sequence[bool]
    replies: Sequence[ModelResponse] | None = None

    @property
    def counts(self) -> list[int]:
        """Runs per suite (a case's own ``repeat`` wins over the suite's)."""
        return [sum(c.repeat or s.suite.repeat for c in s.suite.cases) for s in self.suites]

    def __len__(self) -> int:
        return sum(self.counts)

    def numbers(self, suite: int) -> range:
        """The task numbers of one suite's runs."""
        counts = self.counts
        start = sum(counts[:suite])
        return range(start, start + counts[suite])

    @property
    def judge_later(self) -> bool:
        return any(self.later)

    def __iter__(self) -> Iterator[Task]:
        number = 0
        for index, suite in enumerate(self.suites):
            baseline = self.baselines[index]
            for case_index, case in enumerate(suite.suite.cases):
                earlier = {r.repeat: r for r in baseline.cases.get(case.id, ())} if baseline else {}
                for k in range(case.repeat or suite.suite.repeat):
                    reference = earlier.get(k)
                    yield Task(
                        number=number,
                        suite=index,
                        case=case_index,
                        repeat=k,
                        response=self.replies[number] if self.replies is not None else None,
                        baseline_decision=reference.decision if reference else None,
                        judge_gates=self.gating[index][0],
                        judge_later=self.later[index],
                    )
                    number += 1

    def without_judging_later(self) -> Iterator[Task]:
        """The tasks for one process, which grades each run's judge assertions at once."""
        return (replace(t, judge_later=False) if t.judge_later else t for t in self)


def plan_tasks(
    suites: Sequence[SuiteFile],
    baselines: Sequence[Baseline | None],
    gating: Sequence[tuple[bool, str | None]],
    later: Sequence[bool],
    replies: Sequence[ModelResponse] | None,
) -> Tasks:
    """Every case run in case order; with a replay, line i belongs to run i (too few
    lines is a usage error before anything runs; lines left over, a warning)."""
    tasks = Tasks(suites, baselines, gating, later, replies)
    if replies is not None:
        needed = len(tasks)
        if len(replies) < needed:
            raise UsageError(
                f"--responses has {len(replies)} line(s); these suites need {needed} "
                "(one per case and repeat, in case order)",
                hint="add the missing lines (a case that needs a retry then uses the fallback)",
            )
        if len(replies) > needed:
            # lines left over are often the sign that a case was removed, which shifts
            # every later reply onto the wrong case
            warnings.warn(
                f"--responses has {len(replies)} line(s); this run uses {needed} "
                "(one per case and repeat, in case order): the rest are ignored; check "
                "that each line still belongs to its case",
                ReplayLinesLeftOver,
                stacklevel=2,
            )
    return tasks
