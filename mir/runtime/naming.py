"""An agent's name and its contract file, without the runtime's heavy parts: what
``list_agents`` (and so `mir agents`, `mir drift`) needs, importable in milliseconds."""

from __future__ import annotations

from pathlib import Path

from mir.contracts import AgentContract, field_line, load_contract
from mir.errors import ConfigError


def capability_dir(contract_path: Path) -> Path:
    parent = contract_path.parent
    return parent.parent if parent.name == "agents" else parent


def agent_name(contract: AgentContract, contract_path: Path) -> str:
    return f"{capability_dir(contract_path).name}.{contract.agent}"


def load_agent_contract(path: Path) -> AgentContract:
    """The contract at ``path``; its file must be named after its agent.

    ``mir run agent refunds.triage`` finds ``agents/triage.yaml`` while traces and the
    suspension state use the name inside it: a file whose ``agent:`` differs would be
    found under one name and suspended under another.
    """
    contract = load_contract(path)
    if contract.agent != path.stem:
        line = field_line(path, ("agent",))
        raise ConfigError(
            f"agent: {contract.agent!r} differs from the file name {path.name!r}",
            where=f"{path}:{line}" if line else str(path),
            hint=f"rename the file to {contract.agent}{path.suffix} or set agent: {path.stem}",
        )
    return contract
