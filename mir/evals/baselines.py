"""``evals/baselines/<suite>.json``: the committed result a run is compared against.

One baseline per suite file, named after it (``evals/triage.yaml`` ->
``evals/baselines/triage.json``), so two suites of one agent never share one. A baseline
records its suite; one recorded for another suite is refused. A baseline under the
older name (``baselines/<agent>.json``, one per agent) is still read by the suite that
wrote it, until ``--update-baseline`` writes the suite's own file.

Written by ``mir eval --update-baseline`` and reviewed in pull requests, so the file is
stable and diff-friendly: sorted keys, one value per line, cases in suite order with
their repeats, and a trailing newline. It is written atomically (a temporary file
renamed over it), so an interrupted write never leaves half a baseline to compare
against.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from mir.contracts import EvalSuite
from mir.errors import ConfigError, UsageError
from mir.evals.domain import Baseline, BaselineRun, CaseRun, SuiteResult
from mir.storage import write_atomic

_REGENERATE = "regenerate it with `mir eval --update-baseline`"


class OtherSuiteBaseline(ConfigError):
    """The baseline file records another suite: never compared with, never replaced
    (``--update-baseline`` would silently take that suite's reference away)."""


def baseline_path(suite_path: Path) -> Path:
    """``<suite dir>/baselines/<suite file stem>.json``."""
    return suite_path.parent / "baselines" / f"{suite_path.stem}.json"


def legacy_baseline_path(suite_path: Path, agent: str) -> Path:
    """Where baselines were written when there was one per agent: read only when the
    suite's own file does not exist, and only when it records this suite."""
    return suite_path.parent / "baselines" / f"{agent}.json"


def suite_hash(case_ids: Iterable[str]) -> str:
    """A short hash of the case ids (order-free): which suite a baseline belongs to."""
    text = "\n".join(sorted(case_ids))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_baseline(path: Path, suite: EvalSuite, suite_ref: str) -> Baseline | None:
    """The baseline at ``path`` (None when there is none yet).

    A baseline of another agent or another suite file, or one sharing no case with this
    suite, is refused: comparing against it would report cases of another suite as
    broken or fixed, and gate on noise.
    A baseline whose suite has since gained or lost cases is fine: those cases show as
    new and removed.
    """
    if not path.exists():
        return None
    if not path.is_file():  # read as "no baseline", the gate would lose its reference
        raise ConfigError(
            "the baseline is not a file", where=str(path), hint="move it aside, then re-run"
        )
    try:
        baseline = Baseline.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        raise ConfigError(
            f"not a readable eval baseline ({where}: {first['msg']})",
            where=str(path),
            hint=_REGENERATE,
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read the baseline ({exc.strerror})", where=str(path)) from exc
    if baseline.agent != suite.agent:
        raise ConfigError(
            f"this baseline is of agent {baseline.agent!r} (suite {baseline.suite}), "
            f"not of {suite.agent!r} ({suite_ref})",
            where=str(path),
            hint=f"move it back, or {_REGENERATE}",
        )
    if baseline.suite != suite_ref:
        raise OtherSuiteBaseline(
            f"this baseline was recorded for the suite {baseline.suite}, not for {suite_ref}",
            where=str(path),
            hint=f"move it to {Path(baseline.suite).stem}.json beside it, or {_REGENERATE}",
        )
    ids = {case.id for case in suite.cases}
    if ids and baseline.cases and not ids & set(baseline.cases):
        raise ConfigError(
            f"this baseline shares no case id with {suite_ref} (it was written for "
            f"{baseline.suite})",
            where=str(path),
            hint=_REGENERATE,
        )
    return baseline


def baseline_of(result: SuiteResult) -> Baseline:
    """What a run leaves as the next baseline: per case and repeat, pass/fail, the
    decision (a pairwise judge compares against it) and the judge scores."""
    cases: dict[str, list[BaselineRun]] = {}
    for run in result.runs:
        cases.setdefault(run.case_id, []).append(_baseline_run(run))
    return Baseline(
        suite=result.suite,
        agent=result.agent,
        suite_hash=suite_hash(cases),
        model=result.model,
        prompt_hash=result.prompt_hash,
        contract_hash=result.contract_hash,
        created_at=result.finished_at,
        cases={
            case_id: tuple(sorted(runs, key=lambda r: r.repeat)) for case_id, runs in cases.items()
        },
    )


def _baseline_run(run: CaseRun) -> BaselineRun:
    scores = {str(i): a.score for i, a in enumerate(run.assertions) if a.score is not None}
    return BaselineRun(repeat=run.repeat, passed=run.passed, decision=run.decision, scores=scores)


def render_baseline(baseline: Baseline) -> str:
    """Stable JSON: sorted keys, indented, newline-terminated (diffs show only changes)."""
    data = baseline.model_dump(mode="json")
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_baseline(path: Path, result: SuiteResult) -> None:
    """Write ``result`` as the baseline at ``path`` (atomically; folders created).

    An interrupted run is refused: a baseline missing cases would report them as new
    on every later run, and hide the ones that broke.
    """
    if result.interrupted:
        raise UsageError(
            "an interrupted run does not make a baseline",
            where=str(path),
            hint="run `mir eval --update-baseline` again to the end",
        )
    text = render_baseline(baseline_of(result))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o600)
    except OSError as exc:
        raise _unwritable(path, exc) from exc


def _unwritable(path: Path, exc: OSError) -> ConfigError:
    return ConfigError(
        f"cannot write the baseline ({exc.strerror or exc})",
        where=str(path),
        hint="make its folder writable (and not a file), then re-run",
    )
