"""Rubric drift: a sample of each window's decisions graded by the built-in judge.

Opt-in (``--rubrics``): every graded decision is a model call. The sample is
deterministic: a window's flows ordered by the md5 of their flow id, the first ``k``
taken, so a rerun (a watch loop) asks about the same decisions and the judge's response
cache answers it. The judge runs in eval mode: its flows are traced with source
``eval`` and never count as production decisions. Metric ``rubric:<name>``: the drop of
the mean score (reference minus current, 0 when scores rose), with the KS test on the
two score samples for its p-value (``statistics``).

A judge's word suspends only when it is calibrated, as a suite's judge assertions gate
only then (``ModelJudge.gating``): the latest calibration of this judge (model and prompt
hash) in the rubric judge's ``calibration`` file (relative to the contract) must exist
and reach its ``min_kappa`` (any kappa when none is set). Otherwise the metric reports
(a suspend level past is a warn) and the report says why.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.contracts import AgentContract, DriftRubric, JudgeSettings, field_line
from mir.drift import statistics as stats
from mir.drift.domain import MetricResult
from mir.drift.metrics import MetricVerdicts
from mir.drift.queries import decode_json
from mir.errors import ConfigError
from mir.project import Project

if TYPE_CHECKING:
    from mir.traces import EventsSql

NOT_RUN = "not run (pass --rubrics)"
SIDES = ("reference", "current")


def not_run(contract: AgentContract | None) -> list[MetricResult]:
    """The contract's rubrics, listed without grading anything."""
    rubrics = contract.drift.rubrics if contract is not None else []
    return [
        MetricResult(
            metric=f"rubric:{r.name}",
            kind="semantic",
            family="rubric",
            verdict="info",
            detail=NOT_RUN,
        )
        for r in rubrics
    ]


def sample_size(sample: float, n: int) -> int:
    """How many of ``n`` decisions a rubric grades: a share (< 1) or a count, never more
    than there are."""
    wanted = math.ceil(sample * n) if sample < 1 else int(sample)
    return min(n, wanted)


def sample_order(flow_id: str) -> str:
    """The sampling key: the same flows are chosen on every run (md5 of the flow id)."""
    return hashlib.md5(flow_id.encode(), usedforsecurity=False).hexdigest()


def check_paths(proj: Project, contract_path: Path, contract: AgentContract) -> None:
    """Every rubric path must reach a field of the decision: a config error at its line."""
    paths = [(i, r.path) for i, r in enumerate(contract.drift.rubrics) if r.path]
    if not paths:
        return
    from mir.evals import resolve_path
    from mir.runtime import load_agent

    agent = load_agent(contract_path, project=proj.root, mode="eval")
    try:
        schema = agent.parts.decision_schema
    finally:
        agent.close()
    for index, path in paths:
        found = resolve_path(schema, path)
        known = getattr(found, "known", None)
        if known is not None:
            line = field_line(contract_path, ("drift", "rubrics", index, "path"))
            raise ConfigError(
                f"drift.rubrics[{index}].path: {path!r} is not a field of the decision",
                where=f"{contract_path}:{line}" if line else str(contract_path),
                hint=f"fields: {', '.join(known)}" if known else None,
            )


class RubricGrader:
    """Grades one agent's rubric samples (the windows are in ``drift_flows``)."""

    def __init__(
        self,
        con: Any,
        events: EventsSql,
        proj: Project,
        open_judge: Callable[..., Any] | None = None,
    ) -> None:
        self.con = con
        self.events = events
        self.proj = proj
        if open_judge is None:
            from mir.evals import open_judge
        self.open_judge = open_judge
        self.notes: list[str] = []

    def metrics(
        self, agent: str, contract: AgentContract, contract_path: Path, min_floor: MetricVerdicts
    ) -> list[MetricResult]:
        check_paths(self.proj, contract_path, contract)
        counts = dict(
            self.con.execute("SELECT side, count(*) FROM drift_flows GROUP BY side").fetchall()
        )
        out = []
        for rubric in contract.drift.rubrics:
            out.append(self._one(agent, rubric, contract_path, counts, min_floor))
        return out

    def _sample(self, rubric: DriftRubric, counts: dict[str, int]) -> dict[str, list[str]]:
        chosen: dict[str, list[str]] = {}
        for side in SIDES:
            k = sample_size(rubric.sample, counts.get(side, 0))
            rows = self.con.execute(
                "SELECT flow_id FROM drift_flows WHERE side = $side ORDER BY md5(flow_id) LIMIT $k",
                {"side": side, "k": k},
            ).fetchall()
            chosen[side] = [r[0] for r in rows]
        return chosen

    def _asked(self, agent: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        """flow id -> {input, decision}: the snapshot's input and the final decision."""
        if not ids:
            return {}
        source = self.events("agent = $agent AND list_contains($ids, flow_id)")
        rows = self.con.execute(
            f"SELECT flow_id, step, data FROM ({source}) WHERE step IN ('snapshot', 'final')",
            {"agent": agent, "ids": ids},
        ).fetchall()
        found: dict[str, dict[str, Any]] = {}
        for flow_id, step, data in rows:
            data = decode_json(data) or {}
            entry = found.setdefault(flow_id, {})
            if step == "snapshot":
                entry["input"] = data.get("input") or {}
            else:
                entry["decision"] = (data.get("record") or {}).get("decision")
        return found

    def _one(
        self,
        agent: str,
        rubric: DriftRubric,
        contract_path: Path,
        counts: dict[str, int],
        judge_levels: MetricVerdicts,
    ) -> MetricResult:
        from mir.evals import read_path

        chosen = self._sample(rubric, counts)
        asked = self._asked(agent, chosen["reference"] + chosen["current"])
        scores: dict[str, list[float]] = {side: [] for side in SIDES}
        problems = 0
        settings = rubric.judge or JudgeSettings()
        if settings.min_kappa is None:  # never calibrated at all: not a word to suspend on
            settings = settings.model_copy(update={"min_kappa": -1.0})
        with self.open_judge(
            settings,
            suite_dir=contract_path.parent,
            project=self.proj,
            response_cache=self.proj.state_dir / "cache",
        ) as judge:
            trusted, why = judge.gating()
            for side in SIDES:
                for flow_id in chosen[side]:
                    entry = asked.get(flow_id, {})
                    decision = entry.get("decision")
                    found, answer = (False, None)
                    if isinstance(decision, dict):
                        found, answer = (
                            (True, decision)
                            if rubric.path is None
                            else read_path(decision, rubric.path)
                        )
                    if not found:
                        problems += 1
                        continue
                    graded = judge.grade_answer(rubric.rubric, entry.get("input") or {}, answer)
                    if graded.problem is not None or graded.score is None:
                        problems += 1
                        continue
                    scores[side].append(graded.score)
        if problems:
            self.notes.append(f"{agent}: rubric {rubric.name}: {problems} decision(s) not graded")
        ref, cur = scores["reference"], scores["current"]
        mean_r = sum(ref) / len(ref) if ref else None
        mean_c = sum(cur) / len(cur) if cur else None
        drop = p = None
        if mean_r is not None and mean_c is not None:
            drop = max(mean_r - mean_c, 0.0)  # a rise in scores is not drift to suspend on
            merged = stats.merge_samples(ref, cur)
            p = stats.ks_pvalue(stats.ks_statistic(merged), len(ref), len(cur))
        result = judge_levels.result(
            f"rubric:{rubric.name}",
            "rubric",
            kind="semantic",
            reference=mean_r,
            current=mean_c,
            value=drop,
            p_value=p,
            n=(len(ref), len(cur)),
            min_samples=rubric.min_samples,
            detail=f"mean judge score, {len(ref)} vs {len(cur)} decisions graded",
        )
        if trusted:
            return result
        why = why or "judge not calibrated"
        self.notes.append(f"{agent}: rubric {rubric.name} does not suspend: {why}")
        verdict = "warn" if result.verdict == "suspend" else result.verdict
        return result.model_copy(
            update={"verdict": verdict, "detail": f"{result.detail}; reports only: {why}"}
        )
