"""Drift results and verdicts: what a metric measured and whether it trips.

A metric compares one agent's *current* window with its *reference* window. Each metric
is tagged with the kind of drift it signals:

- **optimization**: the agent finds a shortcut (action mix, limit hugging, overrides,
  tokens and cost per decision);
- **semantic**: it reads its instructions differently (confidence and decision fields,
  schema violations, reviews requested, a new contract, prompt or model);
- **environmental**: the world under it changed (fallbacks, stale re-checks, executor
  errors, latency).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["optimization", "semantic", "environmental"]
KINDS: tuple[Kind, ...] = ("optimization", "semantic", "environmental")
Verdict = Literal["ok", "warn", "suspend", "not_enough_data", "info"]
SEVERITY: dict[str, int] = {"info": 0, "not_enough_data": 0, "ok": 0, "warn": 1, "suspend": 2}

METRIC_KINDS: dict[str, Kind] = {
    "action.js": "optimization",
    "action.psi": "optimization",
    "limits.hugging": "optimization",
    "rate.human_override": "optimization",
    "tokens.mean": "optimization",
    "cost.mean": "optimization",
    "confidence.ks": "semantic",
    "confidence.wasserstein": "semantic",
    "confidence.psi": "semantic",
    "rate.schema_violation": "semantic",
    "rate.review_requested": "semantic",
    "change.contract": "semantic",
    "change.prompt": "semantic",
    "change.model": "semantic",
    "rate.fallback": "environmental",
    "rate.stale": "environmental",
    "rate.executor_error": "environmental",
    "latency.p50": "environmental",
    "latency.p95": "environmental",
    "latency.p99": "environmental",
}


class Levels(BaseModel):
    """Thresholds on ``|value|``; a metric with a p-value also needs p below alpha."""

    model_config = ConfigDict(frozen=True)

    warn: float | None = None
    suspend: float | None = None


# Defaults that hold on stable data (tests/unit/drift/test_false_alarms.py measures the
# false-alarm rates on resampled stable traces). Rates are absolute differences of
# proportions; latency, tokens and cost are ratios current / reference; change points
# count hashes new in the current window; Wasserstein is in the field's own unit, so it
# has no default.
DEFAULT_LEVELS: dict[str, Levels] = {
    "action.js": Levels(warn=0.15, suspend=0.25),
    "action.psi": Levels(warn=0.2, suspend=0.5),
    "categorical.js": Levels(warn=0.15, suspend=0.25),
    "categorical.psi": Levels(warn=0.2, suspend=0.5),
    "confidence.ks": Levels(warn=0.1, suspend=0.2),
    "confidence.psi": Levels(warn=0.25, suspend=0.5),
    "numeric.ks": Levels(warn=0.1, suspend=0.2),
    "numeric.psi": Levels(warn=0.25, suspend=0.5),
    "rate": Levels(warn=0.05, suspend=0.15),
    "limits.hugging": Levels(warn=0.1, suspend=0.25),
    "latency.p50": Levels(warn=1.5, suspend=3.0),
    "latency.p95": Levels(warn=2.0, suspend=4.0),
    "tokens.mean": Levels(warn=1.5, suspend=3.0),
    "cost.mean": Levels(warn=1.5, suspend=3.0),
    "change": Levels(warn=1.0),
    # rubric:<name>: the drop of the judge's mean score (0..1), reference minus current
    "rubric": Levels(warn=0.1, suspend=0.2),
}


def default_levels(metric: str, family: str) -> Levels:
    """The default levels of a metric: by its name, else by its family."""
    return DEFAULT_LEVELS.get(metric) or DEFAULT_LEVELS.get(family) or Levels()


def judge(
    value: float | None,
    p_value: float | None,
    levels: Levels,
    *,
    enough: bool,
    alpha: float,
) -> Verdict:
    """The verdict of one metric: suspend past its suspend level (p < alpha/10 where a
    p-value exists), warn past its warn level (p < alpha), else ok."""
    if not enough:
        return "not_enough_data"
    if levels.warn is None and levels.suspend is None:
        return "info"
    if value is None or math.isnan(value):
        return "ok"
    size = abs(value)
    untested = p_value is None or math.isnan(p_value)  # no test: the level alone
    p = 0.0 if untested else p_value
    assert p is not None
    if levels.suspend is not None and size >= levels.suspend and p < alpha / 10:
        return "suspend"
    if levels.warn is not None and size >= levels.warn and p < alpha:
        return "warn"
    return "ok"


class Window(BaseModel):
    """The decisions one side of the comparison covers."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="How it was chosen: '24h', 'last 500', 'snapshot NAME'.")
    start: datetime | None = Field(None, description="First decision's time (inclusive).")
    end: datetime | None = Field(None, description="Where the window ends (exclusive).")
    decisions: int = 0


class MetricResult(BaseModel):
    """One metric of one agent: reference vs current, and its verdict."""

    model_config = ConfigDict(frozen=True)

    metric: str
    kind: Kind
    family: str = Field(description="Which default levels apply: 'rate', 'numeric.ks' ...")
    reference: float | None = Field(None, description="The reference window's own figure.")
    current: float | None = Field(None, description="The current window's own figure.")
    value: float | None = Field(None, description="The drift statistic compared with levels.")
    p_value: float | None = None
    reference_n: int = 0
    current_n: int = 0
    warn: float | None = None
    suspend: float | None = None
    verdict: Verdict = "ok"
    detail: str = Field("", description="Context: new hashes, the worst category ...")
    reference_histogram: list[float] = Field(default_factory=list)
    current_histogram: list[float] = Field(default_factory=list)


class AgentDrift(BaseModel):
    """Every metric of one agent for one pair of windows."""

    model_config = ConfigDict(frozen=True)

    agent: str
    reference: Window
    current: Window
    metrics: list[MetricResult] = Field(default_factory=list)
    likely_causes: list[str] = Field(
        default_factory=list, description="Contract, prompt or model changes in the window."
    )
    suspended: bool = Field(False, description="The breaker suspended the agent in this run.")

    @property
    def verdict(self) -> Verdict:
        """The worst metric's verdict; ``not_enough_data`` when no metric could be judged
        (every one short of decisions, or none measured; a change point judges one
        decision, which says nothing of drift): that is no "ok"."""
        worst = max((m.verdict for m in self.metrics), key=SEVERITY.__getitem__, default="ok")
        if SEVERITY[worst]:
            return worst
        judged = any(m.verdict == "ok" and m.family != "change" for m in self.metrics)
        return "ok" if judged else "not_enough_data"

    def tripped(self, verdict: Verdict) -> list[MetricResult]:
        return [m for m in self.metrics if m.verdict == verdict]


class DriftReport(BaseModel):
    """What `mir drift --format json` prints (schema: `mir schema`)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    at: datetime
    agents: list[AgentDrift] = Field(default_factory=list)
    stored: bool = Field(False, description="Rows were written to drift_metrics.")
    notes: list[str] = Field(default_factory=list)

    @property
    def past_suspend(self) -> bool:
        return any(agent.verdict == "suspend" for agent in self.agents)


class HistoryPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    at: datetime
    metric: str
    kind: str
    value: float | None
    p_value: float | None
    verdict: str
    current_n: int
