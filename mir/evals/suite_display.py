"""A suite's result as ``mir eval`` shows it on a terminal: the heading, the cases'
table (columns and styled cells), the notes under it, the gate's verdict and what it
says (no terminal: the CLI only draws it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mir.evals.domain import SuiteResult
from mir.evals.summary import case_cells, case_lines, has_repeats, judge_line, suite_notes


@dataclass(frozen=True)
class SuiteView:
    heading: str
    columns: tuple[str, ...]
    rows: list[list[Any]]
    notes: list[tuple[str, str]]  # (text, style), under the table
    verdict: list[tuple[str, str]]  # the gate's line, as (text, style) parts
    reasons: list[str]  # the gate's reasons, then the judge's line


def suite_view(suite: SuiteResult, *, verbose: bool = False) -> SuiteView:
    """``verbose``: the judge's line says in full why it does not gate."""
    model = f"{suite.provider or '-'} / {suite.model or '-'}"
    each = ("pass^k", "pass@k") if has_repeats(suite) else ()
    passed = suite.gate.passed
    verdict = [
        ("gate: passed" if passed else "gate: FAILED", "bold green" if passed else "bold red")
    ]
    if suite.interrupted:
        verdict.append(("  (interrupted: partial results)", "bold yellow"))
    judge = judge_line(suite, verbose=verbose)
    return SuiteView(
        heading=f"{suite.agent}  {suite.suite}  ({model})",
        columns=("case", "runs", "passed", *each, "outcome", "change", "first failure"),
        rows=[case_cells(line, repeats=bool(each)) for line in case_lines(suite)],
        notes=suite_notes(suite),
        verdict=verdict,
        reasons=[f"  {reason}" for reason in suite.gate.reasons]
        + ([f"  {judge}"] if judge else []),
    )
