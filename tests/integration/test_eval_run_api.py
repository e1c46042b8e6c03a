"""``mir.run_eval`` in-process on a real project copy: a typed report, the progress it
reports, a caller's stop, and judge assertions graded by the built-in judge (scripted)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import mir
from mir.evals import CaseRun, EvalReport
from mir.evals.workers import Stop

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"


def decision(action: str = "refund", confidence: float = 0.9, amount: float = 10) -> str:
    return json.dumps({"action": action, "confidence": confidence, "amount": amount, "reason": "r"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    (root / "capabilities" / "refunds" / "evals").mkdir()
    return root


def write_suite(project: Path, text: str) -> Path:
    path = project / "capabilities" / "refunds" / "evals" / "triage.yaml"
    path.write_text(text)
    return path


def write_lines(path: Path, values: list[str]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


class Recorded:
    """An EvalProgress that remembers what it was told (and can stop the run)."""

    def __init__(self, stop: Stop | None = None, after: int = 0):
        self.total: int | None = None
        self.seen: list[tuple[str, CaseRun]] = []
        self.finished = False
        self._stop, self._after = stop, after

    def start(self, total: int) -> None:
        self.total = total

    def advance(self, suite: str, run: CaseRun) -> None:
        self.seen.append((suite, run))
        if self._stop is not None and len(self.seen) == self._after:
            self._stop.set()

    def stop(self, reason: str) -> None:
        pass

    def finish(self) -> None:
        self.finished = True


CASES = "".join(
    f"  - id: c{i}\n    input: {{order_id: A1, amount: 10, message: m{i}}}\n"
    "    expect: {action: refund, status: executed}\n"
    for i in range(5)
)


def test_run_eval_returns_a_typed_report_and_reports_progress(project: Path):
    write_suite(project, "agent: refunds.triage\ncases:\n" + CASES)
    replies = write_lines(project / "r.jsonl", [decision()] * 4 + [decision("deny")])
    progress = Recorded()
    report = mir.run_eval(project=project, responses=replies, progress=progress)
    assert isinstance(report, EvalReport)
    [suite] = report.suites
    assert suite.agent == "refunds.triage" and suite.suite.endswith("evals/triage.yaml")
    assert [r.passed for r in suite.runs] == [True, True, True, True, False]
    assert progress.total == 5 and len(progress.seen) == 5 and progress.finished
    assert all(r.flow_id and r.status == "executed" for r in suite.runs)
    assert not (project / ".mir" / "executions.db").exists()


def test_a_stopped_run_keeps_its_partial_results(project: Path):
    write_suite(project, "agent: triage\ncases:\n" + CASES)
    replies = write_lines(project / "r.jsonl", [decision()] * 5)
    stop = Stop()
    report = mir.run_eval(
        project=project, responses=replies, progress=Recorded(stop, after=2), stop=stop
    )
    [suite] = report.suites
    assert suite.interrupted is True
    assert [r.case_id for r in suite.runs] == ["c0", "c1"]


def test_judge_assertions_are_graded_by_the_built_in_judge(project: Path):
    evals = project / "capabilities" / "refunds" / "evals"
    write_suite(
        project,
        "agent: triage\njudge:\n  responses: judge.jsonl\ncases:\n"
        "  - id: polite\n    input: {order_id: A1, amount: 10, message: broken}\n"
        "    assert:\n"
        "      - {type: rubric, rubric: the reason is polite}\n"
        "      - type: pairwise\n        criteria: the better reason\n"
        "        reference: {action: refund, confidence: 0.9, amount: 10, reason: ok}\n",
    )
    grade = json.dumps({"reason": "polite", "verdict": "pass", "score": 0.9, "confidence": 0.9})
    first = json.dumps({"reason": "first one", "verdict": "A", "confidence": 0.9})
    write_lines(evals / "judge.jsonl", [grade, first, first])  # prefers position A
    replies = write_lines(project / "r.jsonl", [decision()])
    report = mir.run_eval(project=project, responses=replies)
    [run] = report.suites[0].runs
    rubric, pairwise = run.assertions
    assert (rubric.type, rubric.passed, rubric.score) == ("rubric", True, 0.9)
    # the same position won both orders: a flip of the verdict, counted as a tie
    assert pairwise.position_consistent is False and pairwise.passed is True
    assert run.passed


@pytest.mark.parametrize(("jobs", "count"), [(1, 6), (2, 6), (2, 1)])
def test_a_scripted_judge_replays_in_case_order_whatever_jobs(project: Path, jobs: int, count: int):
    evals = project / "capabilities" / "refunds" / "evals"
    cases = "".join(
        f"  - id: c{i}\n    input: {{order_id: A1, amount: 10, message: m{i}}}\n"
        "    assert: [{type: rubric, rubric: the reason is polite}]\n"
        for i in range(count)
    )
    write_suite(project, "agent: triage\njudge:\n  responses: judge.jsonl\ncases:\n" + cases)

    def grade(verdict: str, score: float) -> str:
        return json.dumps({"reason": "r", "verdict": verdict, "score": score, "confidence": 1})

    verdicts = [grade("pass", 0.9), grade("fail", 0.1)] * 3
    write_lines(evals / "judge.jsonl", verdicts)
    replies = write_lines(project / "r.jsonl", [decision()] * 6)
    report = mir.run_eval(project=project, responses=replies, jobs=jobs)
    runs = report.suites[0].runs
    assert [r.case_id for r in runs] == [f"c{i}" for i in range(count)]
    assert [r.passed for r in runs] == ([True, False] * 3)[:count]
    assert [r.assertions[0].score for r in runs] == ([0.9, 0.1] * 3)[:count]


def test_a_suite_whose_last_case_fell_back_is_still_a_suite_of_its_model(project: Path):
    # the baseline and the table header name the model that answered, not 'fallback.0'
    write_suite(project, "agent: refunds.triage\ncases:\n" + CASES)
    replies = write_lines(project / "r.jsonl", [decision()] * 4 + ["not json at all"])
    [suite] = mir.run_eval(project=project, responses=replies).suites
    assert suite.runs[-1].provider == "rules"
    assert (suite.provider, suite.model) == (suite.runs[0].provider, suite.runs[0].model)
    assert suite.provider != "rules"
