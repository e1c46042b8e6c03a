"""Use cases behind ``mir traces``: resolving a flow, verifying the chain, time windows.

They talk to storage through the ``TraceReader`` port, so they are tested with a
hand-written fake; ``TraceStore`` is the real adapter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Protocol

from mir.errors import UsageError
from mir.traces.domain import IntegrityReport, TraceEvent

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_RELATIVE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")


class TraceReader(Protocol):
    def flow(self, flow_id: str) -> list[TraceEvent]: ...

    def flow_ids(self, prefix: str, *, limit: int = 10) -> list[str]: ...

    def verify(self, *, full: bool = False) -> IntegrityReport: ...


class AgentDirectory(Protocol):
    def agent_names(self) -> list[str]: ...


def parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """``2026-11-30T10:00``, ``2026-11-30`` or a relative window: ``90s``, ``1h``, ``2d``."""
    match = _RELATIVE.match(text)
    if match:
        amount, unit = int(match.group(1)), _UNITS[match.group(2)]
        return (now or datetime.now(UTC)) - timedelta(**{unit: amount})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since: cannot read {text!r} as a time",
            hint="use an ISO date/time like 2026-11-30T10:00 or a window like 30m, 1h, 2d",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def find_flow(reader: TraceReader, flow_id: str) -> list[TraceEvent]:
    """The events of the flow whose id is ``flow_id`` or starts with it (unique prefix)."""
    events = reader.flow(flow_id)
    if events:
        return events
    candidates = reader.flow_ids(flow_id, limit=6) if flow_id else []
    if len(candidates) == 1:
        return reader.flow(candidates[0])
    if not candidates:
        raise UsageError(
            f"no flow {flow_id!r} in the trace store", hint="see `mir traces list` for flow ids"
        )
    shown = ", ".join(candidates[:5]) + (", ..." if len(candidates) > 5 else "")
    raise UsageError(
        f"flow id prefix {flow_id!r} is ambiguous ({shown})",
        hint="give more characters of the flow id",
    )


def resolve_agent(reader: AgentDirectory, name: str) -> str:
    """The stored agent name ``name`` stands for: itself, or the one ``capability.agent``
    whose agent part it is (``triage`` for ``support_desk.triage``, as the README writes).

    Ambiguous or unknown names are usage errors that list the agents the store knows.
    """
    known = reader.agent_names()
    if name in known:
        return name
    matches = [agent for agent in known if agent.rpartition(".")[2] == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(
            f"--agent {name!r} is ambiguous: {', '.join(matches)}",
            hint="give the full capability.agent name",
        )
    shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    raise UsageError(
        f"--agent {name!r}: no flows of that agent",
        hint=f"agents with flows: {shown}" if known else "the trace store has no flows yet",
    )


def verify_traces(reader: TraceReader, *, full: bool = False) -> IntegrityReport:
    """Check the store against its manifest; re-hash every line added since the last
    verify (every line when ``full``)."""
    return reader.verify(full=full)
