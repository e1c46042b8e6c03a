"""What an eval run produces: per-run assertion results, per-case summaries, the
comparison with a committed baseline and the gate's verdict.

These models are the interface between the parts of ``mir eval``: the runner fills
``CaseRun``s, the gate turns them (and a ``Baseline``) into a ``SuiteResult``, the
reports (table, JSON, JUnit, HTML) and the DuckDB history read ``SuiteResult``s. The
JSON report's published schema is ``EvalReport``'s.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mir.contracts import FlowStatusName, Tier

CaseChangeKind = Literal["fixed", "broken", "still_failing", "still_passing", "new"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AssertionResult(_Frozen):
    """One assertion of one case run."""

    type: str = Field(description="The assertion type: 'equals', 'rubric', 'retries', ...")
    tier: Tier
    path: str | None = None
    passed: bool | None = Field(
        description="None when it could not be evaluated (e.g. no decision to read)."
    )
    gating: bool = Field(
        True,
        description="False when its failure does not fail the case: `gate: false`, or a "
        "judge that is not calibrated to the suite's min_kappa.",
    )
    expected: Any = None
    actual: Any = None
    message: str = Field("", description="Why it failed, in one line; empty when it passed.")
    score: float | None = Field(None, description="Judge score in [0, 1].")
    reason: str | None = Field(None, description="The judge's reason.")
    position_consistent: bool | None = Field(
        None, description="Pairwise: the verdict held with the positions swapped."
    )


class CaseRun(_Frozen):
    """One run (one repeat) of one case through the decision pipeline."""

    case_id: str
    repeat: int = Field(ge=0, description="0-based index of the repeat.")
    tags: tuple[str, ...] = ()
    passed: bool = Field(description="Every gating assertion passed (and the flow ran).")
    flow_id: str | None = None
    status: FlowStatusName | None = None
    action: str | None = None
    decision: dict[str, Any] | None = None
    reasons: tuple[str, ...] = ()
    confidence: float | None = Field(None, description="The decision's confidence, if any.")
    provider: str | None = None
    model: str | None = None
    prompt_hash: str | None = Field(None, description="Hash of the exact messages last sent.")
    prompt_version: str | None = Field(
        None, description="The prompt's identity: contract version + template hash."
    )
    latency_ms: float = 0.0
    tokens: int = 0
    cached: bool = Field(False, description="Every model answer came from the response cache.")
    error: str | None = Field(
        None, description="The case could not run (config error, crash): one line."
    )
    assertions: tuple[AssertionResult, ...] = ()


class CaseSummary(_Frozen):
    """A case over its repeats: pass^k (every run passed) and pass@k (one did)."""

    case_id: str
    tags: tuple[str, ...] = ()
    runs: int
    passes: int
    pass_all: bool = Field(description="pass^k: every one of the k runs passed.")
    pass_any: bool = Field(description="pass@k: at least one of the k runs passed.")
    flaky: bool = Field(description="Some runs passed and some failed.")
    change: CaseChangeKind | None = Field(
        None, description="Against the baseline (None without a baseline)."
    )


class BaselineRun(_Frozen):
    repeat: int
    passed: bool
    decision: dict[str, Any] | None = None
    scores: dict[str, float] = Field(
        default_factory=dict, description="Judge scores by assertion index, e.g. {'2': 0.8}."
    )


class Baseline(_Frozen):
    """``evals/baselines/<suite>.json``: committed, so a run compares against it."""

    suite: str = Field(description="The suite file, relative to the project root.")
    agent: str
    suite_hash: str = Field(
        description="Hash of the suite's case ids (a baseline of another suite is refused)."
    )
    model: str | None = None
    prompt_hash: str | None = None
    contract_hash: str | None = None
    created_at: datetime
    cases: dict[str, tuple[BaselineRun, ...]]


class Comparison(_Frozen):
    """Paired comparison with the baseline over the cases both have (pass^k per case)."""

    fixed: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()
    still_failing: tuple[str, ...] = ()
    still_passing: int = 0
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    p_value: float = Field(description="McNemar's exact test (two-sided) on broken vs fixed.")


class Gate(_Frozen):
    """The suite's verdict: exit 1 (regression) or 0, and why in words."""

    passed: bool
    reasons: tuple[str, ...] = Field(
        description="Each failed condition, or why the run is within noise."
    )
    alpha: float
    pass_rate: float = Field(description="Share of passing case runs.")
    min_pass_rate: float | None = None
    judge_gating: bool = True
    judge_note: str | None = Field(None, description="Why judge assertions did not gate.")


class ConfidenceReport(_Frozen):
    """How well the decisions' confidence predicts a passing run."""

    source: str = Field(description="'reported' (the model's number) or 'logprobs'.")
    samples: int
    ece: float | None = Field(None, description="Expected calibration error (10 equal bins).")
    review_threshold: float
    wrong: int = Field(description="Runs that failed.")
    wrong_sent_to_review: float | None = Field(
        None, description="Share of failed runs below the review threshold."
    )


class SuiteResult(_Frozen):
    suite: str = Field(description="The suite file, relative to the project root.")
    agent: str
    description: str = ""
    started_at: datetime
    finished_at: datetime
    provider: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    contract_hash: str | None = None
    interrupted: bool = Field(False, description="Stopped (Ctrl-C) before every run finished.")
    runs: tuple[CaseRun, ...]
    cases: tuple[CaseSummary, ...]
    flaky: tuple[str, ...] = ()
    comparison: Comparison | None = None
    gate: Gate
    position_consistency: float | None = Field(
        None, description="Share of pairwise judgements that held with positions swapped."
    )
    confidence: ConfidenceReport | None = None


class EvalReport(_Frozen):
    """What ``mir eval --format json`` prints and ``mir.run_eval`` returns."""

    suites: tuple[SuiteResult, ...]
    exit_code: Literal[0, 1] = Field(description="1 when any suite's gate failed.")


class ReplayLinesLeftOver(UserWarning):
    """``--responses`` has more lines than the run has (case, repeat) pairs."""
