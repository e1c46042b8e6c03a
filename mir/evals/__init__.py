"""``mir eval``: regression suites for agents that gate CI."""

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

__all__ = [
    "AssertionResult",
    "Baseline",
    "BaselineRun",
    "Calibration",
    "CaseRun",
    "CaseSummary",
    "Comparison",
    "ConfidenceReport",
    "EvalReport",
    "Gate",
    "SuiteResult",
    "calibrate_judge",
]
