"""``mir eval``: regression suites for agents that gate CI."""

from mir.evals.baselines import baseline_path, read_baseline, write_baseline
from mir.evals.calibration import Calibration, calibrate_judge
from mir.evals.calibration_report import (
    agreement_line,
    calibration_heading,
    calibration_to_json,
)
from mir.evals.decision_paths import read_path, resolve_path
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
    ReplayLinesLeftOver,
    SuiteResult,
)
from mir.evals.finishing import Evaluated, evaluate
from mir.evals.gate import conclude
from mir.evals.history import EvalHistory, EvalHistoryError, HistoryRow
from mir.evals.history_rows import RUN_COLUMNS, history_heading, run_cells
from mir.evals.progress_lines import LineProgress, eta, stopping
from mir.evals.recorded import recorded_runs
from mir.evals.reports import render_html, render_json, render_junit
from mir.evals.stores import copy_eval_history
from mir.evals.suite_display import SuiteView, suite_view
from mir.evals.summary import (
    CaseLine,
    baseline_notes,
    case_cells,
    case_lines,
    has_repeats,
    judge_line,
    outcome_words,
    sparkline,
    suite_notes,
)

_RUNNING = ("run_eval", "render_report", "html_report", "record_history")


def __getattr__(name: str) -> object:
    # run_eval pulls in the runtime (and its adapters): only when it is asked for, so
    # the result models stay cheap to import (reports, the pytest plugin's collection)
    if name in _RUNNING:
        from mir.evals import api

        return getattr(api, name)
    if name == "open_judge":  # the judge pulls in the runtime too: only when asked for
        from mir.evals import judging

        return judging.open_judge
    raise AttributeError(f"module 'mir.evals' has no attribute {name!r}")


__all__ = [
    "RUN_COLUMNS",
    "AssertionResult",
    "Baseline",
    "BaselineRun",
    "Calibration",
    "CaseLine",
    "CaseRun",
    "CaseSummary",
    "Comparison",
    "ConfidenceReport",
    "EvalHistory",
    "EvalHistoryError",
    "EvalReport",
    "Evaluated",
    "Gate",
    "HistoryRow",
    "LineProgress",
    "ReplayLinesLeftOver",
    "SuiteResult",
    "SuiteView",
    "agreement_line",
    "baseline_notes",
    "baseline_path",
    "calibrate_judge",
    "calibration_heading",
    "calibration_to_json",
    "case_cells",
    "case_lines",
    "conclude",
    "copy_eval_history",
    "eta",
    "evaluate",
    "has_repeats",
    "history_heading",
    "html_report",
    "judge_line",
    "open_judge",
    "outcome_words",
    "read_baseline",
    "read_path",
    "record_history",
    "recorded_runs",
    "render_html",
    "render_json",
    "render_junit",
    "render_report",
    "resolve_path",
    "run_cells",
    "run_eval",
    "sparkline",
    "stopping",
    "suite_notes",
    "suite_view",
    "write_baseline",
]
