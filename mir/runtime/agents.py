"""Listing agents and switching them between active and SUSPENDED.

Drift monitors call ``suspend_agent`` past a threshold; a suspended agent's model is not
asked at all and the contract's rules decide, until ``resume_agent``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from mir.contracts import load_contract
from mir.errors import UsageError
from mir.project import Project, find_project
from mir.runtime.agent_states import AgentStateFile, current_user
from mir.runtime.loading import agent_name


class AgentStatus(BaseModel):
    name: str
    state: Literal["active", "suspended"]
    contract: str | None = None
    reason: str | None = None
    by: str | None = None
    at: str | None = None


def _states(project: Project) -> AgentStateFile:
    return AgentStateFile(project.state_dir / "agents.json")


def _contracts(project: Project) -> dict[str, Path]:
    found = {}
    for path in sorted(project.capabilities_dir.glob("*/agents/*.yaml")):
        found[agent_name(load_contract(path), path)] = path
    return found


def list_agents(project: str | Path | None = None) -> list[AgentStatus]:
    proj = find_project(Path(project) if project is not None else None)
    contracts = _contracts(proj)
    states = _states(proj).read()
    names = sorted({*contracts, *states})
    return [
        AgentStatus(
            name=name,
            state="suspended" if states.get(name, {}).get("state") == "suspended" else "active",
            contract=str(contracts[name].relative_to(proj.root)) if name in contracts else None,
            reason=states.get(name, {}).get("reason"),
            by=states.get(name, {}).get("by"),
            at=states.get(name, {}).get("at"),
        )
        for name in names
    ]


def _set(
    name: str, state: str, project: str | Path | None, reason: str | None, by: str | None
) -> AgentStatus:
    proj = find_project(Path(project) if project is not None else None)
    contracts = _contracts(proj)
    if name not in contracts:
        known = ", ".join(contracts) or "none"
        raise UsageError(f"no agent {name!r} in this project", hint=f"agents: {known}")
    entry: dict[str, Any] = _states(proj).set(name, state, reason=reason, by=by or current_user())
    return AgentStatus(
        name=name,
        state=state,  # type: ignore[arg-type]
        contract=str(contracts[name].relative_to(proj.root)),
        reason=entry["reason"],
        by=entry["by"],
        at=entry["at"],
    )


def suspend_agent(
    name: str,
    *,
    project: str | Path | None = None,
    reason: str | None = None,
    by: str | None = None,
) -> AgentStatus:
    return _set(name, "suspended", project, reason, by)


def resume_agent(
    name: str,
    *,
    project: str | Path | None = None,
    reason: str | None = None,
    by: str | None = None,
) -> AgentStatus:
    return _set(name, "active", project, reason, by)
