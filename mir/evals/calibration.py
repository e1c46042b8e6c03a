"""Calibrating the judge against human labels (``mir eval calibrate LABELS.jsonl``).

The labels file (rubric and pairwise lines) is read by ``calibration_labels``.
The judge judges each line (pairwise positions swapped, as in a suite); its verdicts
against the labels give Cohen's kappa, raw agreement and the confusion matrix per kind.
A rubric line compares the judge's pass (verdict ``pass`` AND score >= the rubric
assertion's default ``min_score``, 0.5: the rule a suite's rubric assertion applies)
with the label, so the kappa measured is the kappa of what gates. A judge flow that ends without a
verdict counts as the label ``no verdict``: a disagreement, never dropped.
Each run appends one record per kind to ``judge-calibration.json`` beside the labels
(``calibration_records``: a JSON list, newest last, committed so CI can gate on
``judge.min_kappa``). A record counts only for the judge that made it: the same model
and prompt hash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from mir.contracts import Route, Rubric
from mir.errors import UsageError
from mir.evals.calibration_labels import KIND_LABELS, PairwiseLabel, RubricLabel, read_labels
from mir.evals.calibration_records import (
    RECORDS_FILE,
    CalibrationRecord,
    Confusion,
    Kind,
    append_calibrations,
)
from mir.evals.judge_identity import JudgeIdentity
from mir.evals.judge_outcomes import GradeOutcome, PairOutcome
from mir.evals.kappa import Agreement, agreement

# The judge's column when its flow ended without a verdict: a disagreement, never dropped.
NO_VERDICT = "no verdict"
# What a rubric assertion needs unless it says otherwise (the same rule as the suite's).
DEFAULT_MIN_SCORE: float = Rubric.model_fields["min_score"].default


class LabelJudge(Protocol):
    """What calibrating asks of a judge (``mir.evals.judging.ModelJudge`` is one)."""

    @property
    def identity(self) -> JudgeIdentity: ...

    @property
    def route(self) -> Route: ...

    def grade_answer(
        self,
        rubric: str,
        input: Mapping[str, Any],
        answer: Any,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> GradeOutcome: ...

    def compare_answers(
        self,
        criteria: str,
        input: Mapping[str, Any],
        candidate: Any,
        reference: Any,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> PairOutcome: ...


@dataclass(frozen=True)
class Judged:
    """One labelled example and what the judge said."""

    line: int
    kind: Kind
    label: str
    verdict: str  # the judge's verdict, or NO_VERDICT
    reason: str
    position_consistent: bool | None = None


@dataclass(frozen=True)
class KindResult:
    kind: Kind
    agreement: Agreement
    examples: tuple[Judged, ...]
    position_consistency: float | None


@dataclass(frozen=True)
class Calibration:
    labels_file: Path
    judge_model: str
    prompt_hash: str
    kinds: tuple[KindResult, ...]
    records_file: Path | None


JUDGE_PROVIDERS = ("llama", "litellm", "scripted")


def calibrate_judge(
    labels_file: Path,
    *,
    suite: Path | None = None,
    project: str | Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
    responses: Path | None = None,
    record: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """``mir eval calibrate``: the judge of ``suite`` (or the project's default judge),
    with the given settings on top, calibrated on ``labels_file``.

    Use the same judge settings as the suite that gates on it: a calibration counts only
    for the model and prompt hash that made it.
    """
    from mir.contracts import JudgeSettings, load_eval_suite
    from mir.evals.judging import open_judge
    from mir.project import find_project

    if provider is not None and provider not in JUDGE_PROVIDERS:
        raise UsageError(
            f"--judge-provider {provider!r} is not a judge provider",
            hint=f"one of {', '.join(JUDGE_PROVIDERS)}",
        )
    labels_file = labels_file.resolve()
    read_labels(labels_file)  # a bad labels file fails before any model is loaded
    settings = JudgeSettings()  # the project's model, like a suite that names no judge
    if suite is not None:
        settings = load_eval_suite(suite).judge
        if settings.responses is not None:  # relative to the suite, which may live elsewhere
            settings = settings.model_copy(
                update={"responses": str(suite.resolve().parent / settings.responses)}
            )
    if provider is None and responses is not None:
        provider = "scripted"  # --judge-responses alone: replay them
    given = {
        "provider": provider,
        "model": model,
        "api_base": api_base,
        "api_key_env": api_key_env,
        "responses": None if responses is None else str(responses.resolve()),
    }
    settings = settings.model_copy(update={k: v for k, v in given.items() if v is not None})
    where = Path(project) if project is not None else labels_file.parent
    with open_judge(settings, suite_dir=labels_file.parent, project=find_project(where)) as judge:
        return calibrate(labels_file, judge, record=record, progress=progress)


def calibrate(
    labels_file: Path,
    judge: LabelJudge,
    *,
    record: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Run ``judge`` on every labelled example of ``labels_file``; with ``record``, append
    the result of each kind to ``judge-calibration.json`` beside it."""
    examples = read_labels(labels_file)
    _enough_replies(judge, examples)
    judged: list[Judged] = []
    for done, (number, example) in enumerate(_numbered(labels_file, examples), start=1):
        judged.append(_judge(judge, number, example))
        if progress is not None:
            progress(done, len(examples))
    kinds = tuple(
        _kind_result(kind, [j for j in judged if j.kind == kind])
        for kind in ("rubric", "pairwise")
        if any(j.kind == kind for j in judged)
    )
    identity = judge.identity
    records_file = labels_file.parent / RECORDS_FILE if record else None
    if records_file is not None:
        at = datetime.now(UTC)
        append_calibrations(
            records_file,
            [
                CalibrationRecord(
                    judge_model=identity.model_label,
                    prompt_hash=identity.prompt_hash,
                    kind=result.kind,
                    kappa=result.agreement.kappa,
                    agreement=result.agreement.agreement,
                    n=result.agreement.n,
                    labels=labels_file.name,
                    at=at,
                    confusion=Confusion(
                        labels=list(result.agreement.labels),
                        matrix=[list(row) for row in result.agreement.matrix],
                    ),
                    position_consistency=result.position_consistency,
                )
                for result in kinds
            ],
        )
    return Calibration(
        labels_file=labels_file,
        judge_model=identity.model_label,
        prompt_hash=identity.prompt_hash,
        kinds=kinds,
        records_file=records_file,
    )


def _enough_replies(judge: LabelJudge, examples: Sequence[RubricLabel | PairwiseLabel]) -> None:
    """A replayed judge (scripted responses) with fewer lines than the examples need is
    refused before any verdict, as ``mir eval --responses`` is: the examples past the
    end would get no verdict, and a kappa over the rest means nothing."""
    route = judge.route
    if route.provider != "scripted" or route.responses is None:
        return
    from mir.inference import read_responses

    path = Path(route.responses)
    have = len(read_responses(path))
    # a pairwise example asks twice (positions swapped)
    need = sum(2 if isinstance(e, PairwiseLabel) else 1 for e in examples)
    if have < need:
        raise UsageError(
            f"judge responses {path.name} has {have} line(s); these labels need {need} "
            "(one per rubric example, two per pairwise one, in file order)",
            where=str(path),
            hint="record the missing verdicts, or calibrate a real judge (--judge-provider)",
        )


def _numbered(
    path: Path, examples: Sequence[RubricLabel | PairwiseLabel]
) -> list[tuple[int, RubricLabel | PairwiseLabel]]:
    """Each example with its line number (blank lines are skipped when reading)."""
    lines = [
        n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()
    ]
    return list(zip(lines, examples, strict=True))


def _judge(judge: LabelJudge, number: int, example: RubricLabel | PairwiseLabel) -> Judged:
    if isinstance(example, RubricLabel):
        graded = judge.grade_answer(
            example.rubric, example.input, example.decision, context=example.context
        )
        return Judged(
            line=number,
            kind="rubric",
            label=example.label,
            verdict=NO_VERDICT
            if graded.verdict is None
            else ("pass" if graded.passes(DEFAULT_MIN_SCORE) else "fail"),
            reason=graded.reason or graded.problem or "",
        )
    pair = judge.compare_answers(
        example.criteria, example.input, example.a, example.b, context=example.context
    )
    verdict = {"win": "A", "loss": "B", "tie": "tie"}.get(pair.outcome or "", NO_VERDICT)
    return Judged(
        line=number,
        kind="pairwise",
        label=example.label,
        verdict=verdict,
        reason=pair.problem or f"as A: {pair.reasons[0]} | as B: {pair.reasons[1]}",
        position_consistent=pair.consistent,
    )


def _kind_result(kind: Kind, judged: list[Judged]) -> KindResult:
    result = agreement(
        [j.label for j in judged], [j.verdict for j in judged], labels=KIND_LABELS[kind]
    )
    consistency = None
    if kind == "pairwise":
        answered = [j.position_consistent for j in judged if j.position_consistent is not None]
        consistency = sum(answered) / len(answered) if answered else None
    return KindResult(kind, result, tuple(judged), consistency)
