"""A contract's ``drift`` section: thresholds per metric, rubric drift, and the names of
the metrics a threshold may name (the drift capability computes them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mir.contracts.eval_suite import JudgeSettings
from mir.contracts.names import Identifier
from mir.errors import did_you_mean


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Metric names a contract's `drift.thresholds` may name (the drift capability computes
# them); decision fields add `field.<name>.<statistic>`.
DRIFT_METRICS: tuple[str, ...] = (
    "action.js",
    "action.psi",
    "confidence.ks",
    "confidence.wasserstein",
    "confidence.psi",
    "rate.schema_violation",
    "rate.fallback",
    "rate.review_requested",
    "rate.human_override",
    "rate.stale",
    "rate.executor_error",
    "latency.p50",
    "latency.p95",
    "latency.p99",
    "tokens.mean",
    "cost.mean",
    "change.contract",
    "change.prompt",
    "change.model",
    "limits.hugging",
)
DRIFT_FIELD_STATISTICS: tuple[str, ...] = ("js", "psi", "ks", "wasserstein")


def is_drift_metric(name: str) -> bool:
    if name in DRIFT_METRICS:
        return True
    if name.startswith("rubric:") and name[len("rubric:") :].isidentifier():
        return True  # a rubric's name is checked against the contract's rubrics
    head, _, statistic = name.rpartition(".")
    prefix, _, field = head.partition(".")
    return prefix == "field" and bool(field) and statistic in DRIFT_FIELD_STATISTICS


def _closest_metric(name: str, rubrics: list[str]) -> str | None:
    """The known metric a misspelt ``name`` most likely means (``field.<x>.<stat>``: the
    closest statistic, the field kept)."""
    head, _, statistic = name.rpartition(".")
    if head.startswith("field.") and head != "field.":
        found = did_you_mean(statistic, DRIFT_FIELD_STATISTICS, cutoff=0.5)
        return f"{head}.{found}" if found else None
    return did_you_mean(name, [*DRIFT_METRICS, *rubrics], cutoff=0.6)


class DriftLevel(_Strict):
    """Where a metric warns and where it suspends the agent (either may be left out)."""

    warn: float | None = Field(None, ge=0)
    suspend: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _warn_first(self) -> DriftLevel:
        if self.warn is not None and self.suspend is not None and self.warn > self.suspend:
            raise ValueError(
                f"warn {self.warn:g} is above suspend {self.suspend:g}: a metric would "
                "suspend the agent before it warns (swap them)"
            )
        return self


# A rubric never grades more decisions than this per window: each one is a model call.
MAX_RUBRIC_SAMPLE = 500


class DriftRubric(_Strict):
    """Rubric drift: a sample of each window's decisions graded by the built-in judge
    (``mir drift --rubrics``); metric ``rubric:<name>`` is the drop of the mean score."""

    name: Identifier = Field(description="The metric is 'rubric:<name>'.")
    rubric: str = Field(min_length=1, description="What the judge grades the answer against.")
    path: str | None = Field(
        None, description="Dotted decision field to grade (e.g. 'reason'); default: the decision."
    )
    sample: float = Field(
        50,
        gt=0,
        le=MAX_RUBRIC_SAMPLE,
        description="Decisions graded per window: a share (0 < x < 1) or a count (>= 1, "
        f"at most {MAX_RUBRIC_SAMPLE}); the same decisions every run (ordered by flow id hash).",
    )
    min_samples: int = Field(
        30, ge=1, description="Below this many graded decisions in either window: not enough data."
    )
    judge: JudgeSettings | None = Field(
        None,
        description="The judge (provider, model ...); default: the project's [tool.mir.model]. "
        "'responses' is relative to the contract.",
    )

    @model_validator(mode="after")
    def _share_or_count(self) -> DriftRubric:
        if self.sample >= 1 and self.sample != int(self.sample):
            raise ValueError("sample: a share below 1 or a whole count")
        return self


class DriftSettings(_Strict):
    """Drift thresholds of one agent (`mir drift`, `mir drift check`): metric -> levels."""

    min_samples: int = Field(
        200, ge=1, description="Below this many decisions in either window: not enough data."
    )
    alpha: float = Field(
        0.01,
        gt=0,
        lt=1,
        description="A metric with a p-value warns only below alpha and suspends only below "
        "alpha / 10: a large-looking change on few decisions is not evidence.",
    )
    thresholds: dict[str, DriftLevel] = Field(
        default_factory=dict,
        description="Overrides of the default levels, e.g. {'action.psi': {warn: 0.1, "
        "suspend: 0.3}}; names: "
        + ", ".join(DRIFT_METRICS)
        + ", field.<name>.<"
        + "|".join(DRIFT_FIELD_STATISTICS)
        + ">, rubric:<name>.",
    )
    rubrics: list[DriftRubric] = Field(
        default_factory=list,
        description="Rubric drift (opt-in at run time: `mir drift --rubrics`, it calls a model).",
    )

    @model_validator(mode="after")
    def _known_metrics(self) -> DriftSettings:
        rubrics = {f"rubric:{r.name}" for r in self.rubrics}
        if len(rubrics) != len(self.rubrics):
            raise ValueError("two rubrics share a name")
        unknown = [
            name
            for name in self.thresholds
            if not is_drift_metric(name) or (name.startswith("rubric:") and name not in rubrics)
        ]
        if unknown:
            guesses = [g for name in unknown if (g := _closest_metric(name, sorted(rubrics)))]
            hint = f"did you mean {', '.join(map(repr, guesses))}? " if guesses else ""
            raise ValueError(
                f"unknown drift metric(s) {', '.join(map(repr, unknown))}; {hint}known: "
                f"{', '.join(DRIFT_METRICS)}, field.<name>.<{'|'.join(DRIFT_FIELD_STATISTICS)}>"
            )
        return self
