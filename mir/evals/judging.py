"""The built-in judge for judge-tier assertions: rubric grading and position-swapped
pairwise comparison, run through the runtime like any agent.

The judge is two agents of the capability ``capabilities/judge`` (shipped in the wheel
as ``mir/_capabilities/judge``), loaded by path: ``grade`` and ``compare``. Their flows
go to the user's project trace store under the names ``judge.grade`` / ``judge.compare``.
The suite's ``judge:`` settings (or the project's ``[tool.mir.model]``) pick one route for
both, so one llama model load (or one scripted file, consumed in call order) serves them.

A pairwise comparison is asked twice, positions swapped; when the two answers disagree
on who wins, the outcome is a tie and ``position_consistent`` is False. Whether judge
assertions gate is ``ModelJudge.gating()``: only when the suite's ``judge.min_kappa`` is met by
the latest calibration of this judge's model and prompt hash (``mir eval calibrate``).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.contracts import EvalCase, JudgeSettings, Pairwise, Route, Rubric, load_contract
from mir.evals.calibration_records import gating
from mir.evals.domain import AssertionResult
from mir.evals.judge_identity import JudgeIdentity, judge_home, judge_prompt_hash
from mir.evals.judge_outcomes import OUTCOME_SCORE, GradeOutcome, Outcome, PairOutcome
from mir.evals.judge_route import judge_route
from mir.inference import ModelSettings
from mir.project import Project

if TYPE_CHECKING:
    from mir.runtime import Agent, DecisionRecord


class ModelJudge:
    """The built-in judge of one suite (or one calibration run): its two agents, asked on
    one model route, loaded on first use."""

    def __init__(
        self,
        route: Route,
        *,
        project: Project,
        settings: JudgeSettings,
        suite_dir: Path,
        traces: Any = None,
        home: Path | None = None,
        response_cache: Path | None = None,
    ) -> None:
        self.route = route
        self.response_cache = response_cache
        self.settings = settings
        self.suite_dir = suite_dir
        self.home = home or judge_home()
        self.project = project
        replayed = route.provider == "scripted" or route.responses is not None
        self.identity = JudgeIdentity(
            provider="scripted" if replayed else route.provider,
            model=route.model or "",
            prompt_hash=judge_prompt_hash(self.home),
        )
        self._traces = traces
        self._owns_traces = traces is None
        self._agents: dict[str, Agent] = {}
        self._gating: tuple[bool, str | None] | None = None

    # ------------------------------------------------------------------ assertions
    def grade(
        self, assertion: Rubric, case: EvalCase, decision: dict[str, Any] | None
    ) -> AssertionResult:
        """A rubric assertion: passed when the judge says pass with a score of at least
        ``min_score`` (``GradeOutcome.passes``)."""
        base = {
            "type": "rubric",
            "tier": "judge",
            "path": assertion.path,
            "gating": assertion.gate and self.gating()[0],
            "expected": f"pass, score >= {assertion.min_score:g}",
        }
        if decision is None:
            return AssertionResult(**base, passed=None, message="no decision to grade")
        found, answer = _at_path(decision, assertion.path)
        if not found:
            return AssertionResult(
                **base, passed=None, message=f"no field {assertion.path!r} in the decision"
            )
        graded = self.grade_answer(assertion.rubric, case.input, answer, context=case.context)
        if graded.problem is not None:
            return AssertionResult(**base, passed=None, message=graded.problem)
        assert graded.score is not None
        passed = graded.passes(assertion.min_score)
        return AssertionResult(
            **base,
            passed=passed,
            actual=f"{graded.verdict}, score {graded.score:g}",
            score=graded.score,
            reason=graded.reason,
            message=""
            if passed
            else f"judge said {graded.verdict} with score {graded.score:g} "
            f"(needs pass and >= {assertion.min_score:g})",
        )

    def compare(
        self,
        assertion: Pairwise,
        case: EvalCase,
        decision: dict[str, Any] | None,
        reference: dict[str, Any] | None,
    ) -> AssertionResult:
        """A pairwise assertion: the candidate's outcome (win / tie / loss after the swap
        rule) must be one the assertion accepts. ``reference`` is the baseline's decision
        for ``against: baseline``; the assertion's own reference otherwise."""
        reference = reference if reference is not None else assertion.reference
        base = {
            "type": "pairwise",
            "tier": "judge",
            "gating": assertion.gate and self.gating()[0],
            "expected": " or ".join(assertion.accept),
        }
        if decision is None:
            return AssertionResult(**base, passed=None, message="no decision to compare")
        if reference is None:
            return AssertionResult(
                **base, passed=None, message="no baseline decision of this case to compare with"
            )
        pair = self.compare_answers(
            assertion.criteria, case.input, decision, reference, context=case.context
        )
        if pair.problem is not None or pair.outcome is None:
            return AssertionResult(**base, passed=None, message=pair.problem or "no verdict")
        passed = pair.outcome in assertion.accept
        flip = "" if pair.consistent else " (the verdict flipped with the positions: a tie)"
        return AssertionResult(
            **base,
            passed=passed,
            actual=pair.outcome,
            score=OUTCOME_SCORE[pair.outcome],
            reason=f"as A: {pair.reasons[0]} | as B: {pair.reasons[1]}",
            position_consistent=pair.consistent,
            message="" if passed else f"the candidate's outcome is {pair.outcome}{flip}",
        )

    def gating(self) -> tuple[bool, str | None]:
        """Whether judge assertions gate: always without ``min_kappa``; with it, only when
        the latest calibration of this model + prompt hash reached it (every kind
        calibrated: rubric and pairwise each count). Read once per judge."""
        if self._gating is None:
            self._gating = gating(self.identity, self.settings, self.suite_dir)
        return self._gating

    # ------------------------------------------------------------------ raw judgements
    def grade_answer(
        self,
        rubric: str,
        input: Mapping[str, Any],
        answer: Any,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> GradeOutcome:
        """The grade agent on one answer (``context``: the world the answer was given in)."""
        asked = {"rubric": rubric, "input": dict(input), "answer": answer}
        record = self._agent("grade").decide(_with_context(asked, context))
        decision = _verdict_of(record)
        if isinstance(decision, str):
            return GradeOutcome(None, None, None, record.flow_id, problem=decision)
        return GradeOutcome(
            verdict=str(decision["verdict"]),
            score=float(decision["score"]),
            reason=str(decision.get("reason", "")),
            flow_id=record.flow_id,
        )

    def compare_answers(
        self,
        criteria: str,
        input: Mapping[str, Any],
        candidate: Any,
        reference: Any,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> PairOutcome:
        """Asked with the candidate as A, then as B. Agreeing answers give the outcome;
        answers that name different winners are a tie, and not position consistent."""
        agent, asked = self._agent("compare"), {"criteria": criteria, "input": dict(input)}
        one = agent.decide(_with_context({**asked, "a": candidate, "b": reference}, context))
        two = agent.decide(_with_context({**asked, "a": reference, "b": candidate}, context))
        flows = (one.flow_id, two.flow_id)
        first, second = _verdict_of(one), _verdict_of(two)
        for got in (first, second):
            if isinstance(got, str):
                return PairOutcome(None, None, None, None, ("", ""), flows, problem=got)
        assert isinstance(first, dict) and isinstance(second, dict)
        as_a: Outcome = {"A": "win", "B": "loss"}.get(first["verdict"], "tie")  # type: ignore[assignment]
        as_b: Outcome = {"B": "win", "A": "loss"}.get(second["verdict"], "tie")  # type: ignore[assignment]
        consistent = as_a == as_b
        return PairOutcome(
            outcome=as_a if consistent else "tie",
            consistent=consistent,
            first=str(first["verdict"]),
            second=str(second["verdict"]),
            reasons=(str(first.get("reason", "")), str(second.get("reason", ""))),
            flow_ids=flows,
        )

    # ------------------------------------------------------------------ agents
    def _agent(self, name: str) -> Agent:
        if name not in self._agents:
            self._agents[name] = self._load(name)
        return self._agents[name]

    def _load(self, name: str) -> Agent:
        from mir.runtime import Agent, load_agent  # the runtime is needed only to judge

        if self._traces is None:
            from mir.traces import TraceStore

            self._traces = TraceStore.for_project(self.project)
        # eval mode: a judgement is never a production decision (drift skips it), and
        # nothing executes: no executor, no execution ledger in the user's project
        loaded = load_agent(
            self.home / "agents" / f"{name}.yaml",
            project=self.project.root,
            traces=self._traces,
            mode="eval",
            **self._cache_option(load_agent),
        )
        deps = loaded.deps
        if self._agents:
            # the first agent's store, ledger and providers serve both: one llama load,
            # one scripted queue consumed in call order
            deps = next(iter(self._agents.values())).deps
            loaded.close()
        contract = loaded.parts.contract.model_copy(update={"routes": [self.route]})
        return Agent(replace(loaded.parts, contract=contract), deps)

    def _cache_option(self, load_agent: Any) -> dict[str, Any]:
        """The run's response cache for ``load_agent``: a fully cached re-run loads no
        judge model. Passed only where the runtime takes it (the cache is a later part;
        without it the judge simply asks the model)."""
        if self.response_cache is None:
            return {}
        if "response_cache" not in inspect.signature(load_agent).parameters:
            return {}
        return {"response_cache": self.response_cache}

    def close(self) -> None:
        closed: set[int] = set()
        for agent in self._agents.values():
            if id(agent.deps.ledger) not in closed:
                closed.add(id(agent.deps.ledger))
                agent.close()
        self._agents.clear()
        if self._owns_traces and self._traces is not None:
            self._traces.close()
            self._traces = None

    def __enter__(self) -> ModelJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_judge(
    settings: JudgeSettings,
    *,
    suite_dir: Path,
    project: Project,
    traces: Any = None,
    provider: str | None = None,
    response_cache: Path | None = None,
) -> ModelJudge:
    """The judge a suite's ``judge:`` settings describe (see ``judge_route``).

    ``traces``: a trace sink to share (the runner's); default: the project's store,
    opened on the first judgement and closed by ``ModelJudge.close``. ``response_cache``: the
    run's cache folder, passed to ``load_agent`` (judge answers are cached like any).
    """
    own = load_contract(judge_home() / "agents" / "grade.yaml").routes[0]
    route = judge_route(
        settings,
        suite_dir=suite_dir,
        model_settings=project.section("model", ModelSettings),
        provider=provider,
        max_tokens=own.max_tokens,
    )
    return ModelJudge(
        route,
        project=project,
        settings=settings,
        suite_dir=suite_dir,
        traces=traces,
        response_cache=response_cache,
    )


def _verdict_of(record: DecisionRecord) -> dict[str, Any] | str:
    """The judge's decision, or why its flow ended without one."""
    if record.status == "executed" and record.decision is not None:
        return record.decision
    reasons = ", ".join(record.reasons) or "no reason recorded"
    return (
        f"the judge gave no verdict: flow {record.flow_id[:12]} ended {record.status} ({reasons})"
    )


def _with_context(asked: dict[str, Any], context: Mapping[str, Any] | None) -> dict[str, Any]:
    return asked if context is None else {**asked, "context": dict(context)}


def _at_path(decision: Mapping[str, Any], path: str | None) -> tuple[bool, Any]:
    """The value at a dotted path (``refund.amount``); the whole decision without one."""
    if path is None:
        return True, dict(decision)
    value: Any = decision
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return False, None
        value = value[key]
    return True, value
