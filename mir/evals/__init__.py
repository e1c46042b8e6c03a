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

_RUNNING = ("run_eval", "render_report", "html_report", "record_history")


def __getattr__(name: str) -> object:
    # run_eval pulls in the runtime (and its adapters): only when it is asked for, so
    # the result models stay cheap to import (reports, the pytest plugin's collection)
    if name in _RUNNING:
        from mir.evals import api

        return getattr(api, name)
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
    "html_report",
    "record_history",
    "render_report",
    "run_eval",
]
