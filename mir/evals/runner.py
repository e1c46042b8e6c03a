"""Running case runs: each one a decision through the real runtime in eval mode, then its
assertions (deterministic, schema, trajectory via ``assertions``; judge via ``judging``).

One ``CaseRunner`` per process holds the agents (and judges) it opened, so a worker
loads a model once; ``workers`` decides which process runs which task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.contracts import EvalCase, EvalSuite
from mir.errors import MirUserError
from mir.evals.domain import AssertionResult, CaseRun
from mir.inference import ModelResponse
from mir.project import Project
from mir.runtime import Agent, DecisionRecord, load_agent
from mir.traces import TraceEvent, TraceStore


@dataclass(frozen=True)
class Settings:
    """How every agent of the run is opened (picklable: sent to worker processes)."""

    root: Path
    provider: str | None = None
    model: str | None = None
    response_cache: Path | None = None
    replay_label: str = "scripted"


@dataclass(frozen=True)
class SuitePlan:
    """One suite as a worker needs it."""

    ref: str
    path: Path
    agent: str  # capability.agent
    suite: EvalSuite


@dataclass(frozen=True)
class Task:
    """One run of one case (picklable)."""

    number: int  # position in case order over every suite
    suite: int
    case: int
    repeat: int
    response: ModelResponse | None = None  # --responses: this run's scripted line
    baseline_decision: dict[str, Any] | None = None  # for pairwise against: baseline
    judge_gates: bool = True
    # A scripted judge replays its lines in call order: with workers, its assertions are
    # graded afterwards in this process, in case order, so the replay matches -j 1.
    judge_later: bool = False


class _Tee:
    """The trace sink of an eval: events go to the store, and the runner keeps each
    flow's events as written, so reading a trajectory costs no query."""

    def __init__(self, store: TraceStore):
        self.store = store
        self.flows: dict[str, list[TraceEvent]] = {}

    def append(self, events: Sequence[TraceEvent]) -> None:
        self.store.append(events)
        for event in events:
            self.flows.setdefault(event.flow_id, []).append(event)

    def flow(self, flow_id: str, *, verify: bool = False) -> list[TraceEvent]:
        return self.store.flow(flow_id, verify=verify)

    def redact(self, value: Any) -> Any:
        return self.store.redact(value)

    def take(self, flow_id: str) -> list[TraceEvent]:
        return self.flows.pop(flow_id, [])


@dataclass
class CaseRunner:
    """Runs tasks in one process; opens each suite's agent (and judge) once."""

    settings: Settings
    plans: Sequence[SuitePlan]
    project: Project | None = None
    agents: dict[int, Agent] = field(default_factory=dict)
    judges: dict[int, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.project is None:
            from mir.project import find_project

            self.project = find_project(self.settings.root)
        self._store: TraceStore | None = None
        self._tee: _Tee | None = None
        # (suite, fresh) -> agent; ``agents`` holds the first-run ones (suite checks)
        self._opened: dict[tuple[int, bool], Agent] = {}

    @property
    def tee(self) -> _Tee:
        if self._tee is None:
            assert self.project is not None
            self._store = TraceStore.for_project(self.project)
            self._tee = _Tee(self._store)
        return self._tee

    def agent(self, index: int, *, repeat: int = 0) -> Agent:
        """The suite's agent; a repeat after the first gets one that asks the model:
        repeats are independent runs (flaky detection), never a cached answer replayed
        (it shares the loaded model, ``MODEL_CACHE``)."""
        fresh = repeat > 0 and self._caching
        key = (index, fresh)
        if key not in self._opened:
            plan, s = self.plans[index], self.settings
            extra: dict[str, Any] = {}
            if self._caching and not fresh:
                extra["response_cache"] = s.response_cache
            self._opened[key] = load_agent(
                plan.agent,
                project=s.root,
                provider=None if s.provider == "scripted" else s.provider,
                model=s.model,
                traces=self.tee,
                mode="eval",
                **extra,
            )
            if not fresh:
                self.agents[index] = self._opened[key]
        return self._opened[key]

    @property
    def _caching(self) -> bool:
        s = self.settings
        return s.response_cache is not None and s.provider != "scripted" and _caches()

    def judge(self, index: int) -> Any:
        if index not in self.judges:
            from mir.evals.judging import open_judge

            plan = self.plans[index]
            assert self.project is not None
            extra: dict[str, Any] = {}
            cache = self.settings.response_cache
            if cache is not None and "response_cache" in _parameters(open_judge):
                extra["response_cache"] = cache  # a cached re-run loads no judge model
            self.judges[index] = open_judge(
                plan.suite.judge,
                suite_dir=plan.path.parent,
                project=self.project,
                traces=self.tee,
                provider=self.settings.provider,  # a scripted run makes the judge scripted
                **extra,
            )
        return self.judges[index]

    def run(self, task: Task) -> CaseRun:
        """One case run, redacted (``redacted``) unless this process is to grade its
        judge assertions later: a worker scrubs its own runs, in parallel."""
        run = self._run(task)
        return run if task.judge_later else self.redacted(run)

    def _run(self, task: Task) -> CaseRun:
        plan = self.plans[task.suite]
        case = plan.suite.cases[task.case]
        base = {"case_id": case.id, "repeat": task.repeat, "tags": tuple(case.tags)}
        try:
            agent = self.agent(task.suite, repeat=task.repeat)
            if task.response is not None:
                agent = agent.replaying([task.response], label=self.settings.replay_label)
            record = agent.decide(case.input, case.context, role=case.role)
            events = self.tee.take(record.flow_id) or agent.trace(record.flow_id)
            results = self._assess(task, case, record, events)
        except MirUserError:
            raise  # a config error (an unloadable judge): the whole run stops, exit 2
        except Exception as exc:  # a crash in user code or an assertion: this run fails
            return CaseRun(**base, passed=False, error=f"{type(exc).__name__}: {exc}"[:500])
        return _case_run(base, agent, record, events, results)

    def _assess(
        self, task: Task, case: EvalCase, record: DecisionRecord, events: list[TraceEvent]
    ) -> list[AssertionResult]:
        from mir.evals.assertions import Observation, evaluate

        agent = self.agent(task.suite, repeat=task.repeat)
        observed = evaluate(case, Observation(record, events, agent.parts, case.role))
        if task.judge_later:
            return observed
        return self._with_judge(task, case, record.decision, observed)

    def judge_later(self, task: Task, run: CaseRun) -> CaseRun:
        """Grade the judge assertions of a run a worker left ungraded (``judge_later``),
        then redact it."""
        return self.redacted(self._judge_later(task, run))

    def _judge_later(self, task: Task, run: CaseRun) -> CaseRun:
        if run.error is not None or run.flow_id is None:
            return run
        case = self.plans[task.suite].suite.cases[task.case]
        try:
            results = self._with_judge(task, case, run.decision, list(run.assertions))
        except MirUserError:
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            return run.model_copy(update={"passed": False, "error": error})
        passed = all(r.passed for r in results if r.gating)
        return run.model_copy(update={"assertions": tuple(results), "passed": bool(passed)})

    def _with_judge(
        self,
        task: Task,
        case: EvalCase,
        decision: dict[str, Any] | None,
        observed: Sequence[AssertionResult],
    ) -> list[AssertionResult]:
        """Every assertion's result in ``expand`` order: the observed (non-judge) ones
        as given, the judge ones graded now."""
        from mir.evals.assertions import expand

        others = iter(observed)
        results: list[AssertionResult] = []
        for assertion in expand(case):
            if assertion.tier != "judge":
                results.append(next(others))
                continue
            judge = self.judge(task.suite)
            if assertion.type == "rubric":
                result = judge.grade(assertion, case, decision)
            else:
                reference = (
                    task.baseline_decision
                    if assertion.against == "baseline"
                    else assertion.reference
                )
                result = judge.compare(assertion, case, decision, reference)
            if not task.judge_gates and result.gating:
                result = result.model_copy(update={"gating": False})
            results.append(result)
        results.extend(others)  # none expected: evaluate covers expand()'s non-judge ones
        return results

    def redacted(self, run: CaseRun) -> CaseRun:
        """``run`` with the trace store's secrets replaced in everything a model or an
        input could have put there: a model that echoes a key from its input must not
        leak it into the reports, the baseline (committed) or the history, when the
        trace of the same flow is redacted. Done once the run is judged, so assertions
        and the judge see the real text whatever ``-j`` is."""
        data = run.model_dump(mode="json", include=_FREE_TEXT)
        # The store's cheap pre-check on what a model or an input wrote, without our own
        # field names ("passed" looks like the start of "password" to it): most runs
        # hold no secret and skip the walk (it was half a worker's time on fast runs).
        written = [
            [data.get("decision"), data.get("reasons"), data.get("error")],
            [[a.get(f) for f in _ASSERTION_TEXT] for a in data.get("assertions") or []],
        ]
        if self.tee.redact(written) == written:
            return run
        clean = self.tee.redact(data)
        if clean == data:
            return run
        return CaseRun.model_validate({**run.model_dump(mode="json"), **clean})

    def close(self) -> None:
        for judge in self.judges.values():
            judge.close()
        for agent in self._opened.values():
            agent.close()
        if self._store is not None:
            self._store.close()
        self._store = self._tee = None
        self.agents.clear()
        self._opened.clear()
        self.judges.clear()


# the CaseRun fields that carry text from a model, an input or user code
_FREE_TEXT = {"decision", "reasons", "error", "assertions"}
_ASSERTION_TEXT = ("path", "expected", "actual", "message", "reason")


def _caches() -> bool:
    """Whether this runtime has the response cache (``load_agent(response_cache=)``)."""
    return "response_cache" in _parameters(load_agent)


def _parameters(function: Callable[..., Any]) -> Any:
    # the response cache arrives in the runtime and the judge separately; until both
    # have it, a run without it still works (and simply asks the model)
    import inspect

    return inspect.signature(function).parameters


def _case_run(
    base: dict[str, Any],
    agent: Agent,
    record: DecisionRecord,
    events: list[TraceEvent],
    results: list[AssertionResult],
) -> CaseRun:
    infers = [e for e in events if e.step == "infer"]
    spec = agent.contract.decision
    confidence = (record.decision or {}).get(spec.confidence_field)
    passed = all(r.passed for r in results if r.gating)
    return CaseRun(
        **base,
        passed=bool(passed),
        flow_id=record.flow_id,
        status=record.status,
        action=record.action,
        decision=record.decision,
        reasons=tuple(record.reasons),
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        provider=record.provider,
        model=record.model,
        prompt_hash=next((e.prompt_hash for e in reversed(infers) if e.prompt_hash), None),
        prompt_version=next((e.prompt_version for e in reversed(infers) if e.prompt_version), None),
        latency_ms=record.latency_ms,
        tokens=record.tokens,
        cached=bool(infers) and all(e.data.get("cached") is True for e in infers),
        assertions=tuple(results),
    )
