"""``mir.run_eval``: find suites, check them, run every case through the runtime in eval
mode, conclude against the baselines; ``mir eval`` is a thin shell over it.

Order of work: everything that can be wrong with the suites, the agents or the options
(bad YAML, unknown agent, assertions on missing fields, a baseline of another suite, too
few ``--responses`` lines) is found before any model is called, and every suite
problem is listed at once (exit 2).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.contracts import MAX_REPEAT
from mir.errors import ConfigError, UsageError
from mir.evals.discovery import PartSuite, SuiteFile, find_suites
from mir.evals.domain import Baseline, CaseRun, EvalReport, SuiteResult
from mir.evals.progress import EvalProgress
from mir.evals.runner import CaseRunner, Settings, SuitePlan, Task
from mir.evals.tasks import plan_tasks
from mir.evals.workers import Stop, execute, first_interrupt_stops
from mir.inference import ModelResponse, read_responses
from mir.project import find_project

PROVIDERS = ("llama", "litellm", "scripted", "rules")
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
    provider = _provider(provider, responses)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: at least 1")
    if repeat is not None and not 1 <= repeat <= MAX_REPEAT:
        raise UsageError(
            f"--repeat {repeat}: from 1 to {MAX_REPEAT} runs per case",
            hint="pass^k and flaky cases need a few runs, not thousands",
        )
    proj = find_project(Path(project) if project is not None else _near(targets))
    broken: list[ConfigError] = []  # suites that do not load: listed with the others' problems
    parts: list[PartSuite] = []  # their cases that do: checked too
    found = find_suites(targets, proj, broken=broken, parts=parts)
    suites = [_as_run(s, repeat) for s in found]
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
        parts = _check(suites, runner, broken, parts)
        baselines = [_baseline(s, update_baseline) for s in suites]
        gating = [_judge_gating(i, s, runner) for i, s in enumerate(suites)]
        later = [jobs > 1 and _judge_replays(i, s, runner) for i, s in enumerate(suites)]
        tasks = plan_tasks(suites, baselines, gating, later, _replies(responses))
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
            _conclude(
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
        _write_baselines(suites, results)
    if record:
        problem = record_history(report, project=proj.root, origin=origin)
        if problem is not None:
            warnings.warn(problem, stacklevel=2)
    return report


def _provider(provider: str | None, responses: str | Path | None) -> str | None:
    if provider is not None and provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}", hint=f"one of {', '.join(PROVIDERS)}")
    if responses is not None:
        if provider not in (None, "scripted"):
            raise UsageError(
                f"--responses replays scripted outputs; it cannot go with --provider {provider}"
            )
        return "scripted"
    if provider == "scripted":
        raise UsageError(
            "--provider scripted needs --responses FILE",
            hint="JSONL, one raw model output a line per case run, in case order",
        )
    return provider


def _as_run(found: SuiteFile, repeat: int | None) -> SuiteFile:
    """The suite as this run sees it: its agent by full name (reports, history), and
    ``--repeat`` as its default repeat (a case's own ``repeat`` still wins)."""
    update: dict[str, Any] = {"agent": found.agent}
    if repeat is not None:
        update["repeat"] = repeat
    return replace(found, suite=found.suite.model_copy(update=update))


def _near(targets: Sequence[str | Path]) -> Path | None:
    for target in targets:
        path = Path(target)
        if path.exists():
            return path if path.is_dir() else path.parent
    return None


def _check(
    suites: Sequence[SuiteFile],
    runner: CaseRunner,
    broken: Sequence[ConfigError] = (),
    partly: Sequence[PartSuite] = (),
) -> list[Any]:
    """Each suite's agent parts; every problem of every suite at once, those of the
    suites that did not load first, then those of their cases that did (``partly``, run
    as plans after the suites'). Loading an agent may raise its own config error."""
    from mir.evals.checking import check_suite

    problems: list[str] = [line for exc in broken for line in str(exc).splitlines()]
    every = []
    found = 0
    for index, suite in enumerate(suites):
        parts = runner.agent(index).parts
        every.append(parts)
        more = check_suite(suite.suite, suite_path=suite.path, parts=parts)
        found += len(more)
        problems += more
    for offset, part in enumerate(partly):
        try:
            agent_parts = runner.agent(len(suites) + offset).parts
        except ConfigError:
            continue  # its file is already listed as broken
        more = check_suite(
            part.file.suite, suite_path=part.file.path, parts=agent_parts, indexes=part.indexes
        )
        found += len(more)
        problems += more
    if len(broken) == 1 and not found:
        raise broken[0]  # one suite that does not load: its own error, as it reads alone
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        # each line already says where and how to fix it: no hint after the last one
        raise ConfigError(f"{count} in eval suites (nothing ran):\n" + "\n".join(problems))
    return every


def _baseline(suite: SuiteFile, updating: bool) -> Baseline | None:
    from mir.evals.baselines import (
        OtherSuiteBaseline,
        baseline_path,
        legacy_baseline_path,
        read_baseline,
    )

    path = baseline_path(suite.path)
    if not path.exists():
        older = legacy_baseline_path(suite.path, suite.agent_name)
        # the one-per-agent name: this suite's baseline only if it says so
        return _legacy_baseline(older, suite) if older != path else None
    try:
        return read_baseline(path, suite.suite, suite.ref)
    except OtherSuiteBaseline:
        raise  # even when updating: it is that suite's reference
    except ConfigError:
        if updating and path.is_file():  # regenerating an unreadable baseline fixes it
            return None
        raise  # a folder in its place: writing would fail only after the whole run


def _legacy_baseline(path: Path, suite: SuiteFile) -> Baseline | None:
    from mir.evals.baselines import read_baseline

    try:
        return read_baseline(path, suite.suite, suite.ref)
    except ConfigError:
        return None  # another suite's (or unreadable): this suite has no baseline yet


def _judge_gating(index: int, suite: SuiteFile, runner: CaseRunner) -> tuple[bool, str | None]:
    if not _has_judge(suite):
        return True, None
    return runner.judge(index).gating()


def _judge_replays(index: int, suite: SuiteFile, runner: CaseRunner) -> bool:
    """The suite's judge replays a scripted file (its lines are consumed in call order)."""
    if not _has_judge(suite):
        return False
    route = getattr(runner.judge(index), "route", None)
    return route is not None and (route.provider == "scripted" or route.responses is not None)


def _has_judge(suite: SuiteFile) -> bool:
    return any(a.tier == "judge" for case in suite.suite.cases for a in case.assertions)


def _replies(responses: str | Path | None) -> list[ModelResponse] | None:
    return read_responses(Path(responses)) if responses is not None else None


def _conclude(
    suite: SuiteFile,
    parts: Any,
    runs: list[CaseRun],
    baseline: Baseline | None,
    gating: tuple[bool, str | None],
    started: datetime,
    finished: datetime,
    *,
    interrupted: bool,
) -> SuiteResult:
    from mir.evals.gate import conclude

    contract = parts.contract
    return conclude(
        suite.suite,
        runs,
        suite_ref=suite.ref,
        baseline=baseline,
        started_at=started,
        finished_at=finished,
        interrupted=interrupted,
        judge_gating=gating[0],
        judge_note=gating[1],
        review_threshold=contract.review.confidence_threshold,
        confidence_source=contract.decision.confidence_source,
        provider=_model_of(runs)[0],
        model=_model_of(runs)[1],
        # the prompt's identity (contract version + template hash), not one run's messages
        prompt_hash=_last(r.prompt_version for r in runs),
        contract_hash=parts.contract_hash,
    )


def _model_of(runs: Sequence[CaseRun]) -> tuple[str | None, str | None]:
    """The (provider, model) that answered most runs, a model route before the rules: a
    suite whose last case fell back is still a suite of that model, not of 'fallback.0'."""
    answered = [(r.provider, r.model) for r in runs if r.provider is not None]
    by_model = [pm for pm in answered if pm[0] != "rules"] or answered
    return Counter(by_model).most_common(1)[0][0] if by_model else (None, None)


def _last(values: Any) -> Any:
    found = None
    for value in values:
        if value is not None:
            found = value
    return found


def _write_baselines(suites: Sequence[SuiteFile], results: Sequence[SuiteResult]) -> None:
    from mir.evals.baselines import baseline_path, write_baseline

    for suite, result in zip(suites, results, strict=True):
        if result.interrupted:
            continue  # a partial run never becomes the reference
        write_baseline(baseline_path(suite.path), result)


def record_history(
    report: EvalReport, *, project: str | Path | None = None, origin: str | None = None
) -> str | None:
    """Store the report in the project's run history (``mir eval history``); a busy or
    damaged history never costs the report: the warning to show, or None."""
    from mir.evals.history import EvalHistory

    proj = find_project(Path(project) if project is not None else None)
    return EvalHistory.for_project(proj).try_record(report, origin=origin)


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
