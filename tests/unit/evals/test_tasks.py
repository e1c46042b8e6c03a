"""Case runs are made as they are taken: counting them costs no memory, and each task
number is its place in case order."""

from __future__ import annotations

import tracemalloc
from itertools import islice
from pathlib import Path

from mir.contracts import EvalSuite
from mir.evals.discovery import SuiteFile
from mir.evals.tasks import Tasks


def suite_file(cases: int, repeat: int, name: str = "triage") -> SuiteFile:
    suite = EvalSuite.model_validate(
        {
            "agent": "triage",
            "repeat": repeat,
            "cases": [
                {"id": f"c{i}", "input": {}, **({"repeat": 2} if i == 0 else {})}
                for i in range(cases)
            ],
        }
    )
    return SuiteFile(Path(f"/p/evals/{name}.yaml"), f"evals/{name}.yaml", suite, "d.triage")


def test_four_hundred_thousand_runs_are_counted_without_being_built():
    suites = [suite_file(4000, 100), suite_file(3, 1, "other")]
    tasks = Tasks(suites, [None, None], [(True, None)] * 2, [False, False])
    tracemalloc.start()
    total = len(tasks)
    first = list(islice(iter(tasks), 5))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert total == 2 + 3999 * 100 + 2 + 2
    assert peak < 1_000_000  # nothing proportional to the 400,000 runs
    assert [t.number for t in first] == [0, 1, 2, 3, 4]
    assert [(t.case, t.repeat) for t in first] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert tasks.numbers(1) == range(total - 4, total)


def test_numbers_follow_iteration_order_across_suites():
    suites = [suite_file(2, 3), suite_file(2, 1, "other")]
    tasks = Tasks(suites, [None, None], [(True, None)] * 2, [False, True])
    every = list(tasks)
    assert [t.number for t in every] == list(range(len(tasks)))
    assert [t.suite for t in every] == [0] * 5 + [1] * 3
    assert [t.number for t in every if t.suite == 1] == list(tasks.numbers(1))
    assert tasks.judge_later and not any(t.judge_later for t in tasks.without_judging_later())
