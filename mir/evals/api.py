"""``mir.run_eval``: find suites, check them, run every case through the runtime in eval
mode, conclude against the baselines; ``mir eval`` is a thin shell over it.

Order of work: everything that can be wrong with the suites, the agents or the options
(bad YAML, unknown agent, assertions on missing fields, a baseline of another suite, too
few ``--responses`` lines) is found before any model is called, and every suite
problem is listed at once (exit 2).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.contracts import MAX_REPEAT
from mir.errors import ConfigError, UsageError
from mir.evals.concluding import conclude_suite, write_baselines
from mir.evals.discovery import PartSuite, find_suites
from mir.evals.domain import CaseRun, EvalReport
from mir.evals.preflight import (
    as_run,
    baseline_of,
    check_suites,
    checked_provider,
    judge_gating,
    judge_replays,
    near,
    replies,
)
from mir.evals.progress import EvalProgress
from mir.evals.runner import CaseRunner, Settings, SuitePlan, Task
from mir.evals.tasks import plan_tasks
from mir.evals.workers import execute
from mir.project import find_project
from mir.runtime import Stop, first_interrupt_stops

CACHE_FOLDER = "cache"  # under the project's state dir (.mir/cache)


def run_eval(
    targets: Sequence[str | Path] = (),
    *,
    project: str | Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    responses: str | Path | None = None,
    jobs: int = 1,
    repeat: int | None = None,
    cache: bool = True,
    update_baseline: bool = False,
    progress: EvalProgress | None = None,
    stop: Stop | None = None,
    record: bool = True,
    origin: str | None = None,
) -> EvalReport:
    """Run the suites ``targets`` name (default: every suite of the project).

    ``targets``: suite files, folders, or ``capability.agent``. ``responses``: a JSONL
    file of raw model outputs replayed one line per case run in case order (implies
    ``provider="scripted"``). ``stop``: set it (or press Ctrl-C) to stop starting runs;
    the result then has ``interrupted`` suites. ``record``: store the report in the run
    history (``.mir/evals.duckdb``); a history that cannot be written is a warning.
    ``origin``: what ran the suites, when not ``mir eval`` (``mir eval history`` shows
    it), e.g. ``"promotion gate qwen@2"``.
    """
    provider = checked_provider(provider, responses)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: at least 1")
    if repeat is not None and not 1 <= repeat <= MAX_REPEAT:
        raise UsageError(
            f"--repeat {repeat}: from 1 to {MAX_REPEAT} runs per case",
            hint="pass^k and flaky cases need a few runs, not thousands",
        )
    proj = find_project(Path(project) if project is not None else near(targets))
    broken: list[ConfigError] = []  # suites that do not load: listed with the others' problems
    parts: list[PartSuite] = []  # their cases that do: checked too
    found = find_suites(targets, proj, broken=broken, parts=parts)
    suites = [as_run(s, repeat) for s in found]
    settings = Settings(
        root=proj.root,
        provider=provider,
        model=model,
        response_cache=proj.state_dir / CACHE_FOLDER if cache else None,
        replay_label=Path(responses).name if responses is not None else "scripted",
    )
    plans = [SuitePlan(s.ref, s.path, s.agent, s.suite) for s in suites]
    # the parts' plans follow the suites' (only checked: a broken suite stops the run)
    checked = [SuitePlan(p.file.ref, p.file.path, p.file.agent, p.file.suite) for p in parts]
    runner = CaseRunner(settings, [*plans, *checked], proj)
    try:
        parts = check_suites(suites, runner, broken, parts)
        baselines = [baseline_of(s, update_baseline) for s in suites]
        gating = [judge_gating(i, s, runner) for i, s in enumerate(suites)]
        later = [jobs > 1 and judge_replays(i, s, runner) for i, s in enumerate(suites)]
        tasks = plan_tasks(suites, baselines, gating, later, replies(responses))
    except BaseException:
        runner.close()
        raise
    stop = stop if stop is not None else Stop()
    if progress is not None:
        progress.start(len(tasks))

    def done(task: Task, run: CaseRun) -> None:
        if progress is not None:
            progress.advance(suites[task.suite].ref, run)

    started = datetime.now(UTC)
    on_stop = (lambda: progress.stop("interrupted")) if progress is not None else (lambda: None)
    try:
        with first_interrupt_stops(stop, on_stop):
            runs = execute(
                tasks,
                settings=settings,
                plans=plans,
                runner=runner,
                jobs=jobs,
                done=done,
                stop=stop,
            )
    finally:
        runner.close()
        if progress is not None:
            progress.finish()
    finished = datetime.now(UTC)
    interrupted = len(runs) < len(tasks)
    results = []
    for index, suite in enumerate(suites):
        numbers = tasks.numbers(index)
        mine = [runs[n] for n in numbers if n in runs]
        results.append(
            conclude_suite(
                suite,
                parts[index],
                mine,
                baselines[index],
                gating[index],
                started,
                finished,
                interrupted=interrupted and len(mine) < len(numbers),
            )
        )
    report = EvalReport(
        suites=tuple(results), exit_code=1 if any(not r.gate.passed for r in results) else 0
    )
    if update_baseline:
        write_baselines(suites, results)
    if record:
        problem = record_history(report, project=proj.root, origin=origin)
        if problem is not None:
            warnings.warn(problem, stacklevel=2)
    return report


def record_history(
    report: EvalReport, *, project: str | Path | None = None, origin: str | None = None
) -> str | None:
    """Store the report in the project's run history (``mir eval history``); a busy or
    damaged history never costs the report: the warning to show, or None."""
    from mir.evals.stores import eval_log

    proj = find_project(Path(project) if project is not None else None)
    return eval_log(proj).try_record(report, origin=origin)


def render_report(report: EvalReport, fmt: str) -> str:
    """``--format json`` (the published schema) or ``junit`` (a testcase per case run)."""
    from mir.evals.reports import render_json, render_junit

    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    raise UsageError(f"--format: unknown format {fmt!r}", hint="table, json or junit")


def html_report(report: EvalReport, *, project: str | Path | None = None) -> str:
    """The self-contained HTML report, with each case run's trace (redacted as stored)."""
    from mir.evals.reports import render_html
    from mir.traces import TraceStore

    traces: dict[str, list[dict[str, Any]]] = {}
    proj = find_project(Path(project) if project is not None else None)
    with TraceStore.for_project(proj) as store:
        for suite in report.suites:
            for run in suite.runs:
                if run.flow_id is not None:
                    events = store.flow(run.flow_id)
                    traces[run.flow_id] = [e.model_dump(mode="json") for e in events]
    return render_html(report, traces)
