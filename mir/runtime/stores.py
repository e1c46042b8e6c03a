"""Which backend holds a project's execution ledger and agent states: the fleet store
(Postgres) when ``[tool.mir.store] url`` or ``$MIR_STORE_URL`` names one, else the
local files under ``state_dir``, exactly as before."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mir.project import Project
from mir.runtime.agent_states import AgentStateFile
from mir.runtime.ledger import SqliteExecutionLedger
from mir.storage import AgentStateStore, FleetStore, StoreSettings
from mir.traces import TraceSettings

if TYPE_CHECKING:
    from mir.runtime.ledger_pg import PostgresExecutionLedger


def fleet(project: Project) -> FleetStore | None:
    """The project's fleet store; None in local mode."""
    return FleetStore.configured(project.section("store", StoreSettings))


def project_ledger(
    project: Project, traces: Any = None
) -> SqliteExecutionLedger | PostgresExecutionLedger:
    """The project's ledger; locally one file, an older ``executions/`` folder migrated
    into it. Results and errors are redacted like trace events."""
    redact = getattr(traces, "redact", None)  # a fake sink has no redactor
    store = fleet(project)
    if store is not None:
        from mir.runtime.ledger_pg import PostgresExecutionLedger

        return PostgresExecutionLedger(store, redact=redact)
    return SqliteExecutionLedger(
        project.state_dir / "executions.db",
        fsync=project.section("traces", TraceSettings).fsync,
        redact=redact,
        legacy=project.state_dir / "executions",
    )


def project_states(project: Project) -> AgentStateStore:
    """The project's agent states (``agents.json`` locally)."""
    store = fleet(project)
    if store is not None:
        from mir.runtime.agent_states_pg import PostgresAgentStates

        return PostgresAgentStates(store)
    return AgentStateFile(project.state_dir / "agents.json")
