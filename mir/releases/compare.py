"""``mir models compare NAME``: production vs shadow (paired) and production vs canary."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from mir.errors import UsageError
from mir.models import read_registry
from mir.project import Project, find_project
from mir.releases.arms import arm_stats, empty_arm
from mir.releases.evidence import ArmStats, CanaryComparison, judge_canary
from mir.releases.settings import CanarySettings
from mir.releases.shadow import ShadowComparison, shadow_stats
from mir.traces import TraceStore, parse_since


class ModelComparison(BaseModel):
    """What ``mir models compare NAME --format json`` prints."""

    name: str
    since: datetime | None = None
    shadow: ShadowComparison = Field(description="Production vs shadow, paired by flow.")
    arms: dict[str, ArmStats] = Field(description="Decisions per arm (production, canary).")
    canary: CanaryComparison | None = Field(
        None, description="The rollback test of the canary arm (when it has decisions)."
    )
    notes: list[str] = Field(default_factory=list)


def compare_model(
    project: Project | str | Path | None, name: str, since: datetime | str | None = None
) -> ModelComparison:
    """``since`` as a time, or as ``--since`` takes it (24h, 90m, 7d, an ISO time)."""
    if isinstance(since, str):
        since = parse_since(since)
    proj = project if isinstance(project, Project) else find_project(_path(project))
    registry = read_registry(proj.root)
    if registry is None or name not in registry.names:
        known = ", ".join(registry.names) if registry else "none (no models.toml)"
        raise UsageError(f"no model named {name!r} in models.toml (known: {known})")
    settings = proj.section("models", CanarySettings)
    with TraceStore.for_project(proj).analysis() as (con, events, _):
        arms = arm_stats(con, events, name, since)
        shadow = shadow_stats(con, events, name, since)
    notes = []
    if not arms and not shadow.pairs:
        notes.append("no decisions yet")
    canary = None
    if "canary" in arms:
        production = arms.get("production") or empty_arm("production")
        canary = judge_canary(name, production, arms["canary"], settings)
    return ModelComparison(
        name=name, since=since, shadow=shadow, arms=arms, canary=canary, notes=notes
    )


def _path(project: str | Path | None) -> Path | None:
    return Path(project) if project is not None else None
