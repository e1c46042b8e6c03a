"""``mir eval``: regression suites for agents that gate CI."""

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
    "CaseRun",
    "CaseSummary",
    "Comparison",
    "ConfidenceReport",
    "EvalReport",
    "Gate",
    "SuiteResult",
]
