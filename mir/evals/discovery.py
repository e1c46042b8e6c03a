"""Finding the suites ``mir eval`` runs, and the agent each one tests.

``mir eval`` runs every ``capabilities/*/evals/*.yaml`` of the project; ``mir eval PATH``
a suite file or the suites under a folder; ``mir eval CAPABILITY.AGENT`` that agent's
suites. A suite names its agent as ``triage`` (the capability of the suite's folder)
or ``capability.agent``. Every failure here is one line, exit 2, before any model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.contracts import EvalCase, EvalSuite, field_line, load_eval_suite
from mir.errors import ConfigError, UsageError
from mir.project import Project

SUITE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class SuiteFile:
    """A loaded suite and the agent it tests."""

    path: Path  # absolute
    ref: str  # relative to the project root (what reports and baselines name)
    suite: EvalSuite
    agent: str  # "capability.agent"

    @property
    def agent_name(self) -> str:
        return self.agent.partition(".")[2]


@dataclass(frozen=True)
class PartSuite:
    """The cases of a suite file that fails its format check which pass it on their own:
    checked against the agent too (never run), so one malformed case does not hide the
    other cases' problems. ``indexes``: each case's index in the file."""

    file: SuiteFile
    indexes: tuple[int, ...]


def find_suites(
    targets: Sequence[str | Path],
    project: Project,
    *,
    broken: list[ConfigError] | None = None,
    parts: list[PartSuite] | None = None,
) -> list[SuiteFile]:
    """The suites the targets name, loaded, each once, in a stable order.

    ``broken``: a suite that does not load (bad YAML, a format error, an unknown agent)
    is added to it and skipped, so the caller can list every suite's problems at once;
    without it, the first one raises. ``parts``: for a suite whose format check fails,
    the cases that pass it alone (``PartSuite``), for the caller to check as well."""
    paths: list[Path] = []
    wanted_agents: dict[Path, str] = {}
    if not targets:
        paths = _project_suites(project)
        if not paths:
            raise UsageError(
                f"no eval suites in {_shown(project.capabilities_dir, project)}/*/evals/",
                hint="`mir new agent CAPABILITY NAME` writes one: evals/NAME.yaml",
            )
    for target in targets:
        found, agent = _suites_of(str(target), project)
        for path in found:
            if agent is not None:
                wanted_agents[path] = agent
        paths += found
    suites: list[SuiteFile] = []
    twins: set[Path] = set()
    for path in dict.fromkeys(paths):
        if path in twins:
            continue  # the other file of a pair already refused
        twin = _baseline_twin(path, project)
        if twin is not None:
            if broken is None:
                raise twin[1]
            twins.add(twin[0])
            broken.append(twin[1])
            continue
        try:
            suite = load_eval_suite(path)
        except ConfigError as exc:
            if broken is None:
                raise
            broken.append(exc)
            part = _valid_part(path, project, broken) if parts is not None else None
            wanted = wanted_agents.get(path)
            if part is not None and parts is not None and wanted in (None, part.file.agent):
                parts.append(part)
            continue
        try:
            agent = suite_agent(suite, path, project)
        except ConfigError as exc:
            if broken is None:
                raise
            broken.append(exc)
            continue
        wanted = wanted_agents.get(path)
        if wanted is not None and agent != wanted:
            continue  # a suite of another agent in the same capability
        suites.append(SuiteFile(path, _shown(path, project), suite, agent))
    if not suites and broken:
        return suites  # the caller lists what is wrong with them
    if not suites:  # only reachable for CAPABILITY.AGENT
        name = next(iter(wanted_agents.values()))
        raise UsageError(f"no eval suite tests {name}", hint=_create_hint(name))
    return suites


def _baseline_twin(path: Path, project: Project) -> tuple[Path, ConfigError] | None:
    """``triage.yaml`` and ``triage.yml`` in one folder would share one baseline
    (``baselines/triage.json``), each replacing the other's: the other file and the
    error refusing both, or None."""
    for suffix in SUITE_SUFFIXES:
        other = path.with_suffix(suffix)
        if suffix != path.suffix and other.is_file():
            first, second = sorted((path, other), key=lambda p: SUITE_SUFFIXES.index(p.suffix))
            baseline = f"{_shown(path.parent, project)}/baselines/{path.stem}.json"
            return other, ConfigError(
                f"{_shown(first, project)} and {_shown(second, project)} would share one "
                f"baseline ({baseline})",
                hint="rename or remove one of them: a suite's baseline is named after its file",
            )
    return None


def _valid_part(path: Path, project: Project, broken: list[ConfigError]) -> PartSuite | None:
    """The cases of ``path`` that pass the format check alone, when the rest of the file
    (its agent, its settings) does too; None otherwise (its error says it all)."""
    import yaml
    from pydantic import ValidationError

    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        return None
    cases, indexes, seen = [], [], set()
    for index, raw in enumerate(data["cases"]):
        try:
            case = EvalCase.model_validate(raw)
        except ValidationError:
            continue
        if case.id not in seen:  # a duplicate id is the format check's problem
            seen.add(case.id)
            cases.append(case)
            indexes.append(index)
    if not cases:
        return None
    try:
        suite = EvalSuite.model_validate({**data, "cases": cases})
    except ValidationError:
        return None
    try:
        agent = suite_agent(suite, path, project)
    except ConfigError as exc:  # a second problem of the same file
        broken.append(exc)
        return None
    return PartSuite(SuiteFile(path, _shown(path, project), suite, agent), tuple(indexes))


def suite_agent(suite: EvalSuite, path: Path, project: Project) -> str:
    """``capability.agent`` of the suite's ``agent:``; its contract must exist."""
    name = suite.agent.strip()
    if "." in name:
        capability, _, agent = name.partition(".")
    else:
        capability, agent = _capability_of(path, project), name
    contract = project.capabilities_dir / capability / "agents" / f"{agent}.yaml"
    if not capability or not agent or not contract.is_file():
        line = field_line(path, ("agent",))
        where = f"{path}:{line}" if line else str(path)
        others = sorted(project.capabilities_dir.glob(f"*/agents/{agent or name}.yaml"))
        hint = (
            "did you mean " + " or ".join(f"`{p.parent.parent.name}.{agent}`" for p in others)
            if others
            else "name an agent of capabilities/*/agents/ ('triage' or 'capability.agent')"
        )
        raise ConfigError(f"agent {suite.agent!r}: no contract {contract}", where=where, hint=hint)
    return f"{capability}.{agent}"


def _project_suites(project: Project) -> list[Path]:
    root = project.capabilities_dir
    return sorted(p for s in SUITE_SUFFIXES for p in root.glob(f"*/evals/*{s}") if p.is_file())


def _suites_of(target: str, project: Project) -> tuple[list[Path], str | None]:
    path = Path(target)
    if path.is_file():
        if path.suffix not in SUITE_SUFFIXES:
            raise UsageError(f"{target}: not a suite file", hint="suites are evals/*.yaml")
        return [path.resolve()], None
    if path.is_dir() and path.resolve() == project.root.resolve():
        return _project_suites(project), None  # not .venv/, examples/ or tests/ suites
    if path.is_dir():
        pattern = "*" if path.name == "evals" else "**/evals/*"
        found = sorted(p.resolve() for s in SUITE_SUFFIXES for p in path.glob(f"{pattern}{s}"))
        if not found:
            raise UsageError(f"no eval suites under {target}", hint="suites are evals/*.yaml")
        return found, None
    if path.suffix in SUITE_SUFFIXES or "/" in target or "\\" in target:
        raise UsageError(
            f"suite file not found: {target}",
            hint=None
            if path.is_absolute()
            else f"read relative to the current folder: {path.absolute()}",
        )
    capability, _, agent = target.partition(".")
    if not capability or not agent or "." in agent:
        raise UsageError(
            f"{target!r}: not a suite file, folder or agent",
            hint="give PATH (a suite or a folder) or CAPABILITY.AGENT, e.g. refunds.triage",
        )
    contract = project.capabilities_dir / capability / "agents" / f"{agent}.yaml"
    if not contract.is_file():
        others = sorted(project.capabilities_dir.glob(f"*/agents/{agent}.yaml"))
        hint = (
            "did you mean " + " or ".join(f"`{p.parent.parent.name}.{agent}`" for p in others)
            if others
            else "`mir agents list` lists the project's agents"
        )
        raise UsageError(
            f"unknown agent {target!r}: no {_shown(contract, project)} "
            f"in the project at {project.root}",
            hint=hint,
        )
    found = sorted(
        p for s in SUITE_SUFFIXES for p in (contract.parent.parent / "evals").glob(f"*{s}")
    )
    if not found:
        raise UsageError(f"no eval suite tests {target}", hint=_create_hint(target))
    return [p.resolve() for p in found], target


def _capability_of(path: Path, project: Project) -> str:
    folder = path.resolve().parent
    if folder.name == "evals":
        return folder.parent.name
    return ""


def _create_hint(agent: str) -> str:
    capability, _, name = agent.partition(".")
    return f"write capabilities/{capability}/evals/{name}.yaml (format: `mir schema`)"


def _shown(path: Path, project: Project) -> str:
    try:
        return path.resolve().relative_to(project.root.resolve()).as_posix()
    except ValueError:
        return str(path)
