"""Everything ``run_eval`` checks before the first case runs: the provider options, the
suites as this run sees them, every suite problem at once (exit 2), each suite's
baseline, and whether its judge gates and replays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, UsageError
from mir.evals.discovery import PartSuite, SuiteFile
from mir.evals.domain import Baseline
from mir.evals.runner import CaseRunner
from mir.inference import ModelResponse, read_responses

PROVIDERS = ("llama", "litellm", "scripted", "rules")


def checked_provider(provider: str | None, responses: str | Path | None) -> str | None:
    if provider is not None and provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}", hint=f"one of {', '.join(PROVIDERS)}")
    if responses is not None:
        if provider not in (None, "scripted"):
            raise UsageError(
                f"--responses replays scripted outputs; it cannot go with --provider {provider}"
            )
        return "scripted"
    if provider == "scripted":
        raise UsageError(
            "--provider scripted needs --responses FILE",
            hint="JSONL, one raw model output a line per case run, in case order",
        )
    return provider


def as_run(found: SuiteFile, repeat: int | None) -> SuiteFile:
    """The suite as this run sees it: its agent by full name (reports, history), and
    ``--repeat`` as its default repeat (a case's own ``repeat`` still wins)."""
    update: dict[str, Any] = {"agent": found.agent}
    if repeat is not None:
        update["repeat"] = repeat
    return replace(found, suite=found.suite.model_copy(update=update))


def near(targets: Sequence[str | Path]) -> Path | None:
    for target in targets:
        path = Path(target)
        if path.exists():
            return path if path.is_dir() else path.parent
    return None


def check_suites(
    suites: Sequence[SuiteFile],
    runner: CaseRunner,
    broken: Sequence[ConfigError] = (),
    partly: Sequence[PartSuite] = (),
) -> list[Any]:
    """Each suite's agent parts; every problem of every suite at once, those of the
    suites that did not load first, then those of their cases that did (``partly``, run
    as plans after the suites'). Loading an agent may raise its own config error."""
    from mir.evals.checking import check_suite

    problems: list[str] = [line for exc in broken for line in str(exc).splitlines()]
    every = []
    found = 0
    for index, suite in enumerate(suites):
        parts = runner.agent(index).parts
        every.append(parts)
        more = check_suite(suite.suite, suite_path=suite.path, parts=parts)
        found += len(more)
        problems += more
    for offset, part in enumerate(partly):
        try:
            agent_parts = runner.agent(len(suites) + offset).parts
        except ConfigError:
            continue  # its file is already listed as broken
        more = check_suite(
            part.file.suite, suite_path=part.file.path, parts=agent_parts, indexes=part.indexes
        )
        found += len(more)
        problems += more
    if len(broken) == 1 and not found:
        raise broken[0]  # one suite that does not load: its own error, as it reads alone
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        # each line already says where and how to fix it: no hint after the last one
        raise ConfigError(f"{count} in eval suites (nothing ran):\n" + "\n".join(problems))
    return every


def baseline_of(suite: SuiteFile, updating: bool) -> Baseline | None:
    from mir.evals.baselines import (
        OtherSuiteBaseline,
        baseline_path,
        legacy_baseline_path,
        read_baseline,
    )

    path = baseline_path(suite.path)
    if not path.exists():
        older = legacy_baseline_path(suite.path, suite.agent_name)
        # the one-per-agent name: this suite's baseline only if it says so
        return legacy_baseline(older, suite) if older != path else None
    try:
        return read_baseline(path, suite.suite, suite.ref)
    except OtherSuiteBaseline:
        raise  # even when updating: it is that suite's reference
    except ConfigError:
        if updating and path.is_file():  # regenerating an unreadable baseline fixes it
            return None
        raise  # a folder in its place: writing would fail only after the whole run


def legacy_baseline(path: Path, suite: SuiteFile) -> Baseline | None:
    from mir.evals.baselines import read_baseline

    try:
        return read_baseline(path, suite.suite, suite.ref)
    except ConfigError:
        return None  # another suite's (or unreadable): this suite has no baseline yet


def judge_gating(index: int, suite: SuiteFile, runner: CaseRunner) -> tuple[bool, str | None]:
    if not has_judge(suite):
        return True, None
    return runner.judge(index).gating()


def judge_replays(index: int, suite: SuiteFile, runner: CaseRunner) -> bool:
    """The suite's judge replays a scripted file (its lines are consumed in call order)."""
    if not has_judge(suite):
        return False
    route = getattr(runner.judge(index), "route", None)
    return route is not None and (route.provider == "scripted" or route.responses is not None)


def has_judge(suite: SuiteFile) -> bool:
    return any(a.tier == "judge" for case in suite.suite.cases for a in case.assertions)


def replies(responses: str | Path | None) -> list[ModelResponse] | None:
    return read_responses(Path(responses)) if responses is not None else None
