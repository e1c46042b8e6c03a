"""``mir eval``: regression suites for agents that gate CI."""

from mir.evals.baselines import baseline_path, read_baseline, write_baseline
from mir.evals.calibration import Calibration, calibrate_judge
from mir.evals.domain import (
    AssertionResult,
    Baseline,
    BaselineRun,
    CaseRun,
    CaseSummary,
    Comparison,
    ConfidenceReport,
    EvalReport,
    Gate,
    SuiteResult,
)
from mir.evals.gate import conclude
from mir.evals.history import EvalHistory, EvalHistoryError, HistoryRow
from mir.evals.reports import render_html, render_json, render_junit

__all__ = [
    "AssertionResult",
    "Baseline",
    "BaselineRun",
    "Calibration",
    "CaseRun",
    "CaseSummary",
    "Comparison",
    "ConfidenceReport",
    "EvalHistory",
    "EvalHistoryError",
    "EvalReport",
    "Gate",
    "HistoryRow",
    "SuiteResult",
    "baseline_path",
    "calibrate_judge",
    "conclude",
    "read_baseline",
    "render_html",
    "render_json",
    "render_junit",
    "write_baseline",
]
