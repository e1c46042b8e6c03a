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


def __getattr__(name: str) -> object:
    # run_eval pulls in the runtime (and its adapters): only when it is asked for, so
    # the result models stay cheap to import (reports, the pytest plugin's collection)
    if name == "run_eval":
        from mir.evals.api import run_eval

        return run_eval
    raise AttributeError(f"module 'mir.evals' has no attribute {name!r}")


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
    "run_eval",
]
