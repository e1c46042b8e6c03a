"""Listing agents and switching them between active and SUSPENDED.

Drift monitors call ``suspend_agent`` past a threshold; a suspended agent's model is not
asked at all and the contract's rules decide, until ``resume_agent``.

Suspending is the emergency brake, so one broken contract never blocks it: every
contract is loaded on its own, a broken one is listed as ``broken`` with its one-line
reason, and the others can still be suspended and resumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from mir.contracts import AgentContract, field_line
from mir.errors import MirUserError, UsageError
from mir.project import Project, find_project
from mir.reviewers import declared_roles
from mir.runtime.agent_states import current_user
from mir.runtime.naming import agent_name, load_agent_contract
from mir.runtime.review_checks import UNKNOWN, review_problems, roster_problems
from mir.runtime.stores import project_states
from mir.storage import AgentStateStore
from mir.traces import TraceStore


class AgentStatus(BaseModel):
    name: str
    state: Literal["active", "suspended", "broken"]
    contract: str | None = None
    reason: str | None = None
    by: str | None = None
    at: str | None = None
    # why the contract does not load (state "broken"); the suspension state is kept
    error: str | None = None
    suspended: bool = False
    # False when suspend/resume found the agent already in that state (nothing written)
    changed: bool = Field(True, exclude=True)


@dataclass(frozen=True)
class _Contracts:
    healthy: dict[str, Path]
    broken: dict[str, tuple[Path, str]]  # name from the path -> (path, one-line reason)


def _states(project: Project) -> AgentStateStore:
    return project_states(project)


def _contracts(project: Project) -> _Contracts:
    healthy: dict[str, Path] = {}
    broken: dict[str, tuple[Path, str]] = {}
    roles = declared_roles(project.root)
    for path in sorted(project.capabilities_dir.glob("*/agents/*.yaml")):
        try:
            contract = load_agent_contract(path)
        except MirUserError as exc:
            # one line for a listing row: the first problem, at its line when known
            line = (exc.where or "").rpartition(":")[2]
            reason = f"line {line}: {exc.message}" if line.isdigit() else exc.message
            broken[f"{path.parent.parent.name}.{path.stem}"] = (path, reason)
            continue
        name = agent_name(contract, path)
        if problems := _review_problems(contract, path, roles):
            broken[name] = (path, "; ".join(problems))
        else:
            healthy[name] = path
    return _Contracts(healthy, broken)


def _review_problems(
    contract: AgentContract, path: Path, roles: dict[str, tuple[str, ...]] | None
) -> list[str]:
    """What loading the agent would refuse in its review rules and approvals roles, read
    from the contract alone: a schema in a pydantic model (user code, not imported here)
    leaves its fields unchecked until the agent loads."""
    decision = contract.decision.json_schema if contract.decision.model is None else UNKNOWN
    spec = contract.input
    given = None if spec is None else spec.json_schema if spec.model is None else UNKNOWN
    found = review_problems(contract, decision or {}, given)
    found += roster_problems(contract, roles)
    located = sorted(
        ((field_line(path, loc) or 0, loc, text) for loc, text in found), key=lambda p: p[0]
    )
    return [
        f"{f'line {line}: ' if line else ''}{'.'.join(map(str, loc))}: {text}"
        for line, loc, text in located
    ]


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def list_agents(project: str | Path | None = None) -> list[AgentStatus]:
    """Every agent of the project: from its contract file, or only from a recorded state."""
    proj = find_project(Path(project) if project is not None else None)
    contracts = _contracts(proj)
    states = _states(proj).read()
    names = sorted({*contracts.healthy, *contracts.broken, *states})
    listing = []
    for name in names:
        entry = states.get(name, {})
        suspended = entry.get("state") == "suspended"
        path = contracts.healthy.get(name)
        error = None
        if name in contracts.broken and path is None:
            path, error = contracts.broken[name]
        listing.append(
            AgentStatus(
                name=name,
                state="broken" if error else "suspended" if suspended else "active",
                contract=_relative(path, proj.root) if path is not None else None,
                reason=entry.get("reason"),
                by=entry.get("by"),
                at=entry.get("at"),
                error=error,
                suspended=suspended,
            )
        )
    return listing


def _set(
    name: str, state: str, project: str | Path | None, reason: str | None, by: str | None
) -> AgentStatus:
    proj = find_project(Path(project) if project is not None else None)
    contracts = _contracts(proj)
    paths = {**{n: p for n, (p, _) in contracts.broken.items()}, **contracts.healthy}
    if name not in paths:
        # `mir agents suspend triage`: the agent name alone, when one capability has it,
        # as `mir traces list --agent` takes it (the emergency brake must not need a retry)
        same = [known for known in paths if known.rpartition(".")[2] == name]
        if len(same) != 1:
            known = ", ".join(paths) or "none"
            raise UsageError(f"no agent {name!r} in this project", hint=f"agents: {known}")
        name = same[0]
    file = _states(proj)
    current = file.read().get(name, {})
    # a broken contract can still be suspended: a process that loaded it before the
    # edit keeps deciding, and reads the state before every decision
    contract = _relative(paths[name], proj.root)
    if (current.get("state") == "suspended") == (state == "suspended"):
        # suspending a suspended agent or resuming an active one changes nothing (the
        # first suspension's reason, who and when stay), and says so
        return AgentStatus(
            name=name,
            state=state,  # type: ignore[arg-type]
            contract=contract,
            reason=current.get("reason"),
            by=current.get("by"),
            at=current.get("at"),
            suspended=state == "suspended",
            changed=False,
        )
    # The reason and name are typed by whoever suspends (or pasted from an alert): they
    # are stored, so they are redacted with the project's trace rules like any event.
    with TraceStore.for_project(proj) as store:
        reason, by = store.redact(reason), store.redact(by or current_user())
    entry: dict[str, Any] = file.set(name, state, reason=reason, by=by)
    return AgentStatus(
        name=name,
        state=state,  # type: ignore[arg-type]
        contract=contract,
        reason=entry["reason"],
        by=entry["by"],
        at=entry["at"],
        suspended=state == "suspended",
    )


def suspend_agent(
    name: str,
    *,
    project: str | Path | None = None,
    reason: str | None = None,
    by: str | None = None,
) -> AgentStatus:
    """Suspend an agent; a suspended one is left as it is (``changed`` is False)."""
    return _set(name, "suspended", project, reason, by)


def resume_agent(
    name: str,
    *,
    project: str | Path | None = None,
    reason: str | None = None,
    by: str | None = None,
) -> AgentStatus:
    """Resume a suspended agent; an active one is left as it is (``changed`` is False)."""
    return _set(name, "active", project, reason, by)
