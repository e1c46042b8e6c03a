"""The canary's automatic rollback: compare the arms, send a worse canary back to shadow.

Run by ``mir models check``, each tick of ``mir drift watch`` and, in-process, by an Agent
whose route names a model with a canary (``CanaryWatch``, after the decision, in a
background thread). A rollback is ``set_stage(..., SHADOW, by="mir (automatic rollback)")``
(history records it), a trace event (like the drift breaker's suspension) and an alert.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

from pydantic import BaseModel

from mir.drift import AlertSettings, PeriodicCheck, send_alert
from mir.errors import UsageError
from mir.models import Stage, read_registry
from mir.project import Project, find_project
from mir.releases.arms import arm_stats, empty_arm
from mir.releases.evidence import CanaryComparison, judge_canary
from mir.releases.settings import CanarySettings
from mir.traces import TraceEvent, TraceStore

BY = "mir (automatic rollback)"


class Rollback(BaseModel):
    name: str
    version: str
    why: str
    comparison: CanaryComparison


class CanaryCheck(BaseModel):
    comparisons: list[CanaryComparison]
    rolled_back: list[Rollback]
    notes: list[str]


def check_canaries(
    project: Project | str | Path | None = None,
    names: list[str] | None = None,
    since: datetime | None = None,
) -> CanaryCheck:
    """Compare every canary (or those of ``names``) with production; roll back the worse."""
    proj = project if isinstance(project, Project) else find_project(_path(project))
    settings = proj.section("models", CanarySettings)
    registry = read_registry(proj.root)
    notes: list[str] = []
    if registry is None:
        return CanaryCheck(comparisons=[], rolled_back=[], notes=["no models.toml"])
    canaries = [
        e
        for name in (names or registry.names)
        if (e := registry.in_stage(name, Stage.CANARY)) is not None
    ]
    comparisons = []
    with TraceStore.for_project(proj).analysis() as (con, events, _):
        for entry in canaries:
            arms = arm_stats(con, events, entry.name, since)
            production = arms.get("production") or empty_arm("production")
            canary = arms.get("canary") or empty_arm("canary", entry.version)
            comparisons.append(judge_canary(entry.name, production, canary, settings))
    rolled = []
    for comparison, entry in zip(comparisons, canaries, strict=True):
        if not comparison.roll_back:
            continue
        why = comparison.evidence()
        from mir.models import set_stage  # the registry's own edit: validated, atomic

        try:
            set_stage(
                proj.root,
                entry.name,
                entry.version,
                Stage.SHADOW,
                by=BY,
                why=why,
                from_stage=Stage.CANARY,
            )
        except UsageError as exc:
            # Moved since we read the registry (another checker rolled it back, or a
            # person promoted it): theirs stands; no second trace or alert.
            notes.append(str(exc))
            continue
        rollback = Rollback(name=entry.name, version=entry.version, why=why, comparison=comparison)
        _trace(proj, rollback)
        notes += _alert(proj, rollback)
        rolled.append(rollback)
    return CanaryCheck(comparisons=comparisons, rolled_back=rolled, notes=notes)


def _payload(rollback: Rollback) -> dict[str, Any]:
    return {
        "event": "canary_rollback",
        "model": rollback.name,
        "version": rollback.version,
        "to": "shadow",
        "by": BY,
        "why": rollback.why,
        "tests": [t.model_dump(mode="json") for t in rollback.comparison.tests],
        "production": rollback.comparison.production.model_dump(mode="json"),
        "canary": rollback.comparison.canary.model_dump(mode="json"),
    }


def _trace(proj: Project, rollback: Rollback) -> None:
    event = TraceEvent(
        flow_id=uuid4().hex,
        seq=0,
        step="route",
        agent=f"models:{rollback.name}",
        reasons=("canary_rolled_back",),
        data=_payload(rollback),
    )
    with TraceStore.for_project(proj) as traces:
        traces.append([event])


def _alert(proj: Project, rollback: Rollback) -> list[str]:
    alerts = proj.section("alerts", AlertSettings)
    if not (alerts.command or alerts.webhook) or "suspend" not in alerts.on:
        return []
    return send_alert(alerts, _payload(rollback))


class CanaryWatch(PeriodicCheck):
    """In-process, like ``mir.drift.Breaker``: ``CanaryWatch(agent).decide(...)`` decides
    exactly like ``agent.decide``; every ``every`` decisions (``check_every`` of
    ``[tool.mir.models]`` by default) it checks the project's canaries in a background
    thread, after the decision, so no decision waits for it or fails because of it."""

    def __init__(
        self,
        agent: Any,
        *,
        project: Project | str | Path | None = None,
        names: list[str] | None = None,
        every: int | None = None,
    ) -> None:
        self.project = project if isinstance(project, Project) else find_project(_path(project))
        self.names = names
        super().__init__(agent, every or self.project.section("models", CanarySettings).check_every)
        self.last: CanaryCheck | None = None

    thread_name = "mir-canary"

    def _run(self) -> None:
        self.last = check_canaries(self.project, self.names)
        # the agent's resolver picks up the new stage at once (no watchdog needed here)
        resolver = getattr(getattr(self.agent, "deps", None), "models", None)
        if self.last.rolled_back and resolver is not None:
            resolver.reload()

    def wait(self, timeout: float | None = None) -> CanaryCheck | None:
        """Wait for a running check (tests, shutdown); returns the latest result."""
        self._join(timeout)
        return self.last


def _path(project: str | Path | None) -> Path | None:
    return Path(project) if project is not None else None
