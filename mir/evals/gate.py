"""From case runs to a suite's verdict: summaries, the baseline diff and the gate.

The gate fails (exit 1) only on evidence of a regression, and says why in words:

- against a baseline, when more cases broke than were fixed and McNemar's exact test
  on those paired cases gives p < alpha (a planted 6-of-40 break fails; 2 broken and 2
  fixed is noise and passes, saying so);
- when a case tagged ``critical`` breaks (or, with no baseline entry for it, fails):
  one critical case is enough, no statistics;
- when the share of passing runs is below the suite's ``min_pass_rate``;
- with neither a baseline nor a ``min_pass_rate``, when any run fails (nothing says
  that failure is known or tolerated).

Cases are paired on pass^k (a case passes only when every repeat passed), so a flaky
case counts as failing; flaky cases are listed on their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mir.contracts import EvalSuite
from mir.evals.domain import (
    Baseline,
    CaseRun,
    CaseSummary,
    Comparison,
    ConfidenceReport,
    Gate,
    SuiteResult,
)
from mir.evals.statistics import (
    expected_calibration_error,
    is_flaky,
    mcnemar_exact,
)
from mir.evals.statistics import (
    pass_all as all_passed,
)
from mir.evals.statistics import (
    pass_any as any_passed,
)

NAMED = 10  # case ids named in one gate reason before "(+N more)"


def conclude(
    suite: EvalSuite,
    runs: Sequence[CaseRun],
    *,
    suite_ref: str,
    baseline: Baseline | None,
    started_at: datetime,
    finished_at: datetime,
    interrupted: bool = False,
    judge_gating: bool = True,
    judge_note: str | None = None,
    review_threshold: float,
    confidence_source: str,
    provider: str | None = None,
    model: str | None = None,
    prompt_hash: str | None = None,
    contract_hash: str | None = None,
    planned_runs: int | None = None,
) -> SuiteResult:
    """The suite's result: per-case summaries, the comparison and the gate's verdict.

    ``planned_runs`` (only said when interrupted) defaults to the suite's cases times
    their repeats; a caller overriding the repeats (``--repeat``) passes its own."""
    ordered = _in_case_order(suite, runs)
    summaries = summarize(suite, ordered)
    comparison = None
    if baseline is not None:
        comparison = compare(summaries, baseline, suite_ids=[c.id for c in suite.cases])
        changes = _changes(comparison)
        summaries = [s.model_copy(update={"change": changes.get(s.case_id)}) for s in summaries]
    if planned_runs is None:
        planned_runs = sum(case.repeat or suite.repeat for case in suite.cases)
    gate = decide(
        summaries,
        ordered,
        comparison,
        alpha=suite.alpha,
        min_pass_rate=suite.min_pass_rate,
        interrupted=interrupted,
        planned_runs=planned_runs,
        judge_gating=judge_gating,
        judge_note=judge_note,
    )
    return SuiteResult(
        suite=suite_ref,
        agent=suite.agent,
        description=suite.description,
        started_at=started_at,
        finished_at=finished_at,
        provider=provider,
        model=model,
        prompt_hash=prompt_hash,
        contract_hash=contract_hash,
        interrupted=interrupted,
        runs=tuple(ordered),
        cases=tuple(summaries),
        flaky=tuple(s.case_id for s in summaries if s.flaky),
        comparison=comparison,
        gate=gate,
        position_consistency=position_consistency(ordered),
        confidence=confidence_report(
            ordered, source=confidence_source, review_threshold=review_threshold
        ),
    )


def _in_case_order(suite: EvalSuite, runs: Sequence[CaseRun]) -> list[CaseRun]:
    """Runs sorted by the suite's case order, then repeat (``-j`` finishes them in any
    order; reports and baselines must not depend on it)."""
    position = {case.id: i for i, case in enumerate(suite.cases)}
    return sorted(runs, key=lambda r: (position.get(r.case_id, len(position)), r.case_id, r.repeat))


def summarize(suite: EvalSuite, runs: Sequence[CaseRun]) -> list[CaseSummary]:
    """One summary per case that ran, in run order (pass^k, pass@k, flaky)."""
    tags = {case.id: tuple(case.tags) for case in suite.cases}
    grouped: dict[str, list[CaseRun]] = {}
    for run in runs:
        grouped.setdefault(run.case_id, []).append(run)
    summaries = []
    for case_id, case_runs in grouped.items():
        outcomes = [r.passed for r in case_runs]
        summaries.append(
            CaseSummary(
                case_id=case_id,
                tags=tags.get(case_id, case_runs[0].tags),
                runs=len(outcomes),
                passes=sum(outcomes),
                pass_all=all_passed(outcomes),
                pass_any=any_passed(outcomes),
                flaky=is_flaky(outcomes),
            )
        )
    return summaries


def compare(
    summaries: Sequence[CaseSummary], baseline: Baseline, *, suite_ids: Sequence[str]
) -> Comparison:
    """Pair every case that ran with its baseline entry, on pass^k."""
    fixed, broken, still_failing, new = [], [], [], []
    still_passing = 0
    for summary in summaries:
        before = baseline.cases.get(summary.case_id)
        if before is None:
            new.append(summary.case_id)
            continue
        was = all_passed([run.passed for run in before])
        if was and summary.pass_all:
            still_passing += 1
        elif was:
            broken.append(summary.case_id)
        elif summary.pass_all:
            fixed.append(summary.case_id)
        else:
            still_failing.append(summary.case_id)
    in_suite = set(suite_ids)
    removed = sorted(case_id for case_id in baseline.cases if case_id not in in_suite)
    return Comparison(
        fixed=tuple(fixed),
        broken=tuple(broken),
        still_failing=tuple(still_failing),
        still_passing=still_passing,
        new=tuple(new),
        removed=tuple(removed),
        p_value=mcnemar_exact(len(broken), len(fixed)),
    )


def _changes(comparison: Comparison) -> dict[str, str]:
    changes: dict[str, str] = {}
    for kind in ("fixed", "broken", "still_failing", "new"):
        for case_id in getattr(comparison, kind):
            changes[case_id] = kind
    return changes


def decide(
    summaries: Sequence[CaseSummary],
    runs: Sequence[CaseRun],
    comparison: Comparison | None,
    *,
    alpha: float,
    min_pass_rate: float | None,
    interrupted: bool = False,
    planned_runs: int | None = None,
    judge_gating: bool = True,
    judge_note: str | None = None,
) -> Gate:
    """The verdict: every failed condition as a reason, or why the run passes."""
    failures: list[str] = []
    notes: list[str] = []
    pass_rate = sum(r.passed for r in runs) / len(runs) if runs else 0.0

    if comparison is not None:
        b, c, p = len(comparison.broken), len(comparison.fixed), comparison.p_value
        counts = f"{b} broken, {c} fixed"
        test = f"McNemar p = {_p(p)}, alpha {alpha:g}"
        if b > c and p < alpha:
            failures.append(f"{counts}: a regression ({test}): {_names(comparison.broken)}")
        elif b == 0 and c == 0:
            notes.append(f"no case changed against the baseline ({test})")
        elif b >= c:
            notes.append(f"{counts}: within noise ({test})")
        else:
            notes.append(f"{counts}: no regression ({test})")
    elif min_pass_rate is None:
        # Nothing to compare with and no threshold: a failing case fails. A first run
        # whose cases fail must not print 'gate: passed' (a fresh scaffold did, at 0 %).
        failed = sum(not r.passed for r in runs)
        if failed:
            failures.append(
                f"{failed} of {len(runs)} run{'s' if len(runs) != 1 else ''} failed, with no "
                "baseline and no min_pass_rate: fix the cases, or set min_pass_rate, or record "
                "the failures as known in a baseline (`mir eval --update-baseline`)"
            )
        else:
            notes.append(
                "no baseline: every run passed; commit a baseline (`mir eval --update-baseline`) "
                "so that later runs are compared with this one"
            )
    else:
        notes.append("no baseline: only the thresholds gate (`mir eval --update-baseline`)")

    critical = _critical_regressions(summaries)
    broken_critical = [s.case_id for s in critical if s.change == "broken"]
    failing_critical = [s.case_id for s in critical if s.change != "broken"]
    if broken_critical:
        failures.append(f"critical case broken: {_names(broken_critical)}")
    if failing_critical:
        # no baseline entry to compare with: a failing critical case is enough
        failures.append(f"critical case failing: {_names(failing_critical)}")

    if min_pass_rate is not None and pass_rate < min_pass_rate:
        failures.append(
            f"pass rate {_percent(pass_rate)} is below min_pass_rate {_percent(min_pass_rate)}"
        )
    reasons = failures or notes
    if interrupted:
        planned = f" of {planned_runs}" if planned_runs is not None else ""
        reasons.append(f"interrupted: concluded on the {len(runs)}{planned} runs that finished")
    return Gate(
        passed=not failures,
        reasons=tuple(reasons),
        alpha=alpha,
        pass_rate=pass_rate,
        min_pass_rate=min_pass_rate,
        judge_gating=judge_gating,
        judge_note=judge_note,
    )


def _critical_regressions(summaries: Sequence[CaseSummary]) -> list[CaseSummary]:
    """Critical cases that broke, or that fail with nothing to compare them to (no
    baseline, or new since it). A critical case that already failed in the baseline is
    a known failure, not a regression: it shows as still failing."""
    return [
        s
        for s in summaries
        if "critical" in s.tags and not s.pass_all and s.change in (None, "new", "broken")
    ]


def position_consistency(runs: Sequence[CaseRun]) -> float | None:
    """Share of pairwise judgements whose verdict held with the positions swapped."""
    held = [
        a.position_consistent
        for run in runs
        for a in run.assertions
        if a.position_consistent is not None
    ]
    return sum(held) / len(held) if held else None


def confidence_report(
    runs: Sequence[CaseRun], *, source: str, review_threshold: float
) -> ConfidenceReport:
    """How well confidence predicts a passing run, and how many failed runs the
    contract's review threshold (strictly below it goes to a human, as in the runtime)
    would have caught. Runs without a confidence (a crash, no decision) are left out."""
    scored = [r for r in runs if r.confidence is not None]
    wrong = [r for r in scored if not r.passed]
    caught = [r for r in wrong if r.confidence is not None and r.confidence < review_threshold]
    return ConfidenceReport(
        source=source,
        samples=len(scored),
        ece=expected_calibration_error(
            [r.confidence for r in scored if r.confidence is not None],
            [r.passed for r in scored],
        ),
        review_threshold=review_threshold,
        wrong=len(wrong),
        wrong_sent_to_review=len(caught) / len(wrong) if wrong else None,
    )


def _names(case_ids: Sequence[str]) -> str:
    shown = ", ".join(case_ids[:NAMED])
    extra = len(case_ids) - NAMED
    return f"{shown} (+{extra} more)" if extra > 0 else shown


def _p(value: float) -> str:
    return f"{value:.2f}" if value >= 0.01 else f"{value:.2g}"


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"
