"""After the runs: each suite's result against its baseline (``gate.conclude``) and,
with ``--update-baseline``, the new baselines (never from an interrupted run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mir.evals.discovery import SuiteFile
from mir.evals.domain import Baseline, CaseRun, SuiteResult


def conclude_suite(
    suite: SuiteFile,
    parts: Any,
    runs: list[CaseRun],
    baseline: Baseline | None,
    gating: tuple[bool, str | None],
    started: datetime,
    finished: datetime,
    *,
    interrupted: bool,
) -> SuiteResult:
    from mir.evals.gate import conclude

    contract = parts.contract
    return conclude(
        suite.suite,
        runs,
        suite_ref=suite.ref,
        baseline=baseline,
        started_at=started,
        finished_at=finished,
        interrupted=interrupted,
        judge_gating=gating[0],
        judge_note=gating[1],
        review_threshold=contract.review.confidence_threshold,
        confidence_source=contract.decision.confidence_source,
        provider=_model_of(runs)[0],
        model=_model_of(runs)[1],
        # the prompt's identity (contract version + template hash), not one run's messages
        prompt_hash=_last(r.prompt_version for r in runs),
        contract_hash=parts.contract_hash,
    )


def _model_of(runs: Sequence[CaseRun]) -> tuple[str | None, str | None]:
    """The (provider, model) that answered most runs, a model route before the rules: a
    suite whose last case fell back is still a suite of that model, not of 'fallback.0'."""
    answered = [(r.provider, r.model) for r in runs if r.provider is not None]
    by_model = [pm for pm in answered if pm[0] != "rules"] or answered
    return Counter(by_model).most_common(1)[0][0] if by_model else (None, None)


def _last(values: Any) -> Any:
    found = None
    for value in values:
        if value is not None:
            found = value
    return found


def write_baselines(suites: Sequence[SuiteFile], results: Sequence[SuiteResult]) -> None:
    from mir.evals.baselines import baseline_path, write_baseline

    for suite, result in zip(suites, results, strict=True):
        if result.interrupted:
            continue  # a partial run never becomes the reference
        write_baseline(baseline_path(suite.path), result)
