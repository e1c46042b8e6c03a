"""An eval run in words: what ``mir eval``'s table, its progress and ``mir eval history``
show, computed from the result models (no terminal, no I/O: the CLI only draws it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mir.evals.domain import EvalReport, SuiteResult

SPARKS = "▁▂▃▄▅▆▇█"


def outcome_words(status: str | None, action: str | None) -> str:
    """A run's outcome in plain words: nothing executes in an eval, so a decision the
    pipeline accepted "would execute"."""
    act = action or "no action"
    if status == "executed":
        return f"would execute {act}"
    if status == "pending_review":
        return f"{act}, to review"
    if status == "fallback":
        return f"fallback: {act}"
    if status is None:
        return "no decision"
    return f"{status}: {act}" if action else status


@dataclass(frozen=True)
class CaseLine:
    """One row of a suite's table."""

    case_id: str
    runs: int
    passed: str  # "2/3"
    style: str  # green: every run passed, yellow: some, red: none
    pass_all: bool
    pass_any: bool
    outcome: str | None  # the first run's, in words
    change: str | None  # against the baseline: "broken", "still failing", ...
    first_failure: str


def case_lines(suite: SuiteResult) -> list[CaseLine]:
    first: dict[str, str] = {}
    outcome: dict[str, str] = {}
    for run in suite.runs:
        outcome.setdefault(run.case_id, outcome_words(run.status, run.action))
        if not run.passed and run.case_id not in first:
            first[run.case_id] = run.error or next(
                (a.message for a in run.assertions if a.gating and a.passed is not True), ""
            )
    return [
        CaseLine(
            case_id=case.case_id,
            runs=case.runs,
            passed=f"{case.passes}/{case.runs}",
            style="green" if case.pass_all else ("yellow" if case.pass_any else "red"),
            pass_all=case.pass_all,
            pass_any=case.pass_any,
            outcome=outcome.get(case.case_id),
            change=case.change.replace("_", " ") if case.change else case.change,
            first_failure=first.get(case.case_id, ""),
        )
        for case in suite.cases
    ]


def case_cells(line: CaseLine, *, repeats: bool) -> list[Any]:
    """A case's row in a suite's table, styled cells as ``(words, style)``: pass^k and
    pass@k only when ``repeats``, a broken case's change in red."""
    every = [
        ("yes" if ok else "no", "green" if ok else "red") for ok in (line.pass_all, line.pass_any)
    ]
    return [
        line.case_id,
        line.runs,
        (line.passed, line.style),
        *(every if repeats else []),
        line.outcome,
        (line.change, "red" if line.change == "broken" else ""),
        line.first_failure,
    ]


def has_repeats(suite: SuiteResult) -> bool:
    """Whether any case ran more than once (the table then shows pass^k and pass@k)."""
    return any(case.runs > 1 for case in suite.cases)


def suite_notes(suite: SuiteResult) -> list[tuple[str, str]]:
    """The lines under a suite's table, before its gate, each with its style: pass^k
    totals, flaky cases, broken and fixed against the baseline, the confidence's
    calibration."""
    lines: list[tuple[str, str]] = []
    if has_repeats(suite):
        cases = len(suite.cases)
        every = sum(c.pass_all for c in suite.cases)
        some = sum(c.pass_any for c in suite.cases)
        totals = f"pass^k (every run passed): {every}/{cases} cases; "
        lines.append((totals + f"pass@k (one run passed): {some}/{cases} cases", ""))
    if suite.flaky:
        lines.append(("flaky: " + ", ".join(suite.flaky), "yellow"))
    if suite.comparison is not None:
        for label, ids in (("broken", suite.comparison.broken), ("fixed", suite.comparison.fixed)):
            if ids:
                lines.append((f"{label}: {', '.join(ids)}", ""))
    if suite.confidence is not None and suite.confidence.ece is not None:
        conf = suite.confidence
        sent = (
            f", {conf.wrong_sent_to_review:.0%} of wrong decisions sent to review"
            if conf.wrong_sent_to_review is not None
            else ""
        )
        lines.append((f"confidence ({conf.source}): ECE {conf.ece:.3f}{sent}", ""))
    return lines


def judge_line(suite: SuiteResult, *, verbose: bool) -> str:
    """One short line on the judge (its position consistency, whether it gated); the
    full reason it did not gate with ``verbose``."""
    parts = []
    if suite.position_consistency is not None:
        parts.append(f"position consistency {suite.position_consistency:.0%}")
    note = suite.gate.judge_note
    if note and verbose:
        parts.append(f"reported, not gating: {note}")
    elif note:
        why = note.split(":", 1)[0].removeprefix("judge ")
        parts.append(f"reported, not gating ({why}; -v says why)")
    return "judge: " + "; ".join(parts) if parts else ""


def baseline_notes(report: EvalReport) -> list[str]:
    """What ``--update-baseline`` did to each suite's baseline, one line each."""
    lines = []
    for suite in report.suites:
        if suite.interrupted:
            note = "interrupted: baseline NOT updated"
        else:
            note = "baseline updated (commit evals/baselines/)"
            failing = sum(not case.pass_all for case in suite.cases)
            if failing:
                cases = (
                    "case recorded as a known failure"
                    if failing == 1
                    else "cases recorded as known failures"
                )
                note += f"; {failing} failing {cases}: later runs report it as still failing"
        lines.append(f"{suite.suite}: {note}")
    return lines


def sparkline(values: list[float]) -> str:
    """Pass rates in [0, 1] as block characters (an absolute scale: 100% is always full)."""
    top = len(SPARKS) - 1
    return "".join(SPARKS[round(min(1.0, max(0.0, v)) * top)] for v in values)
