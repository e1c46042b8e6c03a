"""Promote a model version, through the eval gate when the target is production."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from mir.contracts import load_contract, load_eval_suite
from mir.errors import ConfigError
from mir.models import (
    EntryChanged,
    ModelChange,
    ModelEntry,
    ModelRef,
    Stage,
    read_registry,
    record,
    set_stage,
)
from mir.project import Project

if TYPE_CHECKING:
    from mir.evals import EvalReport


@dataclass(frozen=True)
class Promotion:
    entry: ModelEntry | None  # None: refused by the gate
    report: EvalReport | None = None  # the gate's eval report (production only)
    agents: tuple[str, ...] = ()  # agents whose routes name the model
    note: str = ""  # why no gate ran, when none did
    replayed: bool = False  # the gate replayed recorded answers (--responses)


def agents_using(project: Project, name: str) -> list[str]:
    """``capability.agent`` of every contract with a route naming ``name`` (any version)."""
    found = []
    for path in sorted(project.capabilities_dir.glob("*/agents/*.yaml")):
        contract = load_contract(path)
        if any(r.model and ModelRef.parse(r.model).name == name for r in contract.routes):
            found.append(f"{path.parent.parent.name}.{path.stem}")
    return found


def promote(
    project: Project,
    name: str,
    version: str,
    stage: Stage,
    *,
    by: str,
    why: str,
    share: float | None = None,
    force: bool = False,
    responses: Path | None = None,
) -> Promotion:
    """Move the version into ``stage``; into production only if its agents' suites pass
    against it (or ``force``). ``responses`` replays recorded model outputs (tests, CI):
    answers not produced by this version, so a replayed gate promotes to production only
    with ``force``, and the history says it was replayed. The move is bound to the entry
    the gate tested: changed in ``models.toml`` meanwhile, it is refused (``EntryChanged``,
    recorded), ``force`` or not."""
    root = project.root
    registry = read_registry(root)
    entry = registry.get(name, version) if registry is not None else None
    if entry is None or entry.stage in (Stage.RETIRED, Stage(stage)):
        # set_stage says precisely what is wrong, before any eval runs.
        set_stage(root, name, version, stage, by=by, why=why, share=share)
    if Stage(stage) != Stage.PRODUCTION:
        return Promotion(set_stage(root, name, version, stage, by=by, why=why, share=share))
    assert entry is not None  # set_stage raised otherwise
    agents = agents_using(project, name)
    report, note = _run_gate(project, agents, f"{name}@{version}", responses)
    replayed = report is not None and responses is not None
    gate = {**_summary(report, agents, note), **_tested(entry, replayed, report)}
    failed = report is not None and (bool(report.exit_code) or replayed)
    if failed and not force:
        _refused(root, entry, by, why, gate)
        return Promotion(None, report, tuple(agents), note, replayed)
    try:
        promoted = set_stage(
            root, name, version, stage, by=by, why=why, forced=failed, gate=gate, tested=entry
        )
    except EntryChanged as exc:
        _refused(root, entry, by, why, {**gate, "note": str(exc)})
        raise
    return Promotion(promoted, report, tuple(agents), note, replayed)


def _tested(entry: ModelEntry, replayed: bool, report: EvalReport | None) -> dict:
    """What the gate ran on: the entry's artifact and digest, and whether the answers
    were replayed from a file instead of produced by it."""
    if report is None:
        return {}
    return {"replayed": replayed, "artifact": entry.artifact, "sha256": entry.sha256}


def _refused(root: Path, entry: ModelEntry, by: str, why: str, gate: dict) -> None:
    change = ModelChange(
        name=entry.name,
        version=entry.version,
        from_stage=str(entry.stage),
        to_stage="refused",
        by=by,
        at=datetime.now(UTC),
        why=why,
        gate=gate,
    )
    record(root, [change])


def _run_gate(
    project: Project, agents: list[str], model: str, responses: Path | None
) -> tuple[EvalReport | None, str]:
    if not agents:
        return None, "no agent's routes name this model: no gate to run"
    from mir.evals import run_eval

    with_suites = [a for a in agents if _has_suite(project, a)]
    if not with_suites:
        return None, f"no eval suite for {', '.join(agents)}: no gate to run"
    report = run_eval(  # recorded in `mir eval history` as this version's gate
        with_suites,
        project=project.root,
        model=model,
        responses=responses,
        origin=f"promotion gate {model}",
    )
    return report, ""


def _has_suite(project: Project, agent: str) -> bool:
    capability, _, name = agent.partition(".")
    for path in (project.capabilities_dir / capability / "evals").glob("*.y*ml"):
        try:
            suite = load_eval_suite(path)
        except ConfigError:
            return True  # let run_eval report the broken suite
        if suite.agent.strip() in (name, agent):
            return True
    return False


def _summary(report: EvalReport | None, agents: list[str], note: str) -> dict:
    if report is None:
        return {"agents": agents, "ran": False, "note": note}
    return {
        "agents": agents,
        "ran": True,
        "passed": report.exit_code == 0,
        "suites": {s.suite: s.gate.passed for s in report.suites},
    }
