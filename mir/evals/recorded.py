"""``mir eval history AGENT``: the recorded runs of an agent, oldest first."""

from __future__ import annotations

from pathlib import Path

from mir.errors import UsageError
from mir.evals.history import HistoryRow
from mir.evals.stores import eval_log


def recorded_runs(agent: str, *, limit: int, project: Path | None = None) -> list[HistoryRow]:
    """The last ``limit`` runs of ``agent``; an agent with no contract and no recorded
    run is a typo (exit 2), which would otherwise read as "no runs yet"."""
    from mir.project import find_project

    found = find_project(project)
    rows = eval_log(found).rows(agent, limit=limit)
    capability, _, name = agent.rpartition(".")
    if not rows and not any(found.capabilities_dir.glob(f"{capability or '*'}/agents/{name}.yaml")):
        raise UsageError(
            f"unknown agent {agent!r}: no capabilities/*/agents/{agent}.yaml "
            "and no recorded eval runs",
            hint="see `mir agents` for the project's agents",
        )
    return rows
