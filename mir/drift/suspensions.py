"""The breaker's check: measure every agent, suspend those past a suspend level (the
state first, then its ``agent_suspended`` trace event), record an event a killed check
left missing, and alert on warn and suspend."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

from mir.alerts import AlertSettings
from mir.alerts import send_alert as send
from mir.drift import storage, tables
from mir.drift.domain import AgentDrift, DriftReport
from mir.drift.monitor import _Agent, _known_agents, _project, measure
from mir.drift.windows import WindowOptions
from mir.project import Project
from mir.runtime import suspend_agent
from mir.traces import TraceEvent, TraceStore


def _reason(agent: AgentDrift) -> str:
    worst = agent.tripped("suspend")[0]
    cur, ref = agent.current, agent.reference
    return (
        f"drift: {worst.metric} = {worst.value:.4g} >= {worst.suspend:g} "
        f"(current {cur.label}, {cur.decisions} decisions; reference {ref.label}, "
        f"{ref.decisions} decisions)"
    )


def _payload(report: DriftReport, agent: AgentDrift, verdict: str) -> dict[str, Any]:
    tripped = agent.tripped("suspend") + agent.tripped("warn")
    return {
        "event": "drift_suspend" if verdict == "suspend" else "drift_warn",
        "agent": agent.agent,
        "verdict": verdict,
        "suspended": agent.suspended,
        "run_id": report.run_id,
        "at": report.at.isoformat(),
        "reference": agent.reference.model_dump(mode="json"),
        "current": agent.current.model_dump(mode="json"),
        "metrics": [
            m.model_dump(mode="json", exclude={"reference_histogram", "current_histogram"})
            for m in tripped
        ],
        "likely_causes": agent.likely_causes,
    }


def check(
    project: str | Path | None = None,
    agents: Sequence[str] = (),
    options: WindowOptions | None = None,
) -> DriftReport:
    """The breaker: measure, suspend every agent past a suspend level (reason in
    ``agents.json`` and a trace event), and alert on warn and suspend."""
    proj = _project(project)
    report = measure(proj.root, agents, options)
    alerts = proj.section("alerts", AlertSettings)
    known = _known_agents(proj)
    notes = list(report.notes)
    checked = []
    for name in _record_unrecorded(proj, known, report):
        notes.append(f"{name}: recorded the suspension a killed check left unrecorded")
    # Every agent past a suspend level is suspended first; the alerts go out after, so a
    # slow alert endpoint never delays the brake of the next agent.
    for agent in report.agents:
        if agent.verdict == "suspend":
            entry = known.get(agent.agent)
            if entry is None:
                notes.append(
                    f"{agent.agent}: past a suspend level, but no contract here to suspend"
                )
            elif not entry.suspended:
                reason = _reason(agent)
                # The brake first: a check killed between the two writes leaves the agent
                # suspended, and the next check records the event (below).
                suspend_agent(agent.agent, project=proj.root, reason=reason, by="mir drift")
                _trace_suspension(proj, agent.agent, agent, reason, report)
                agent = agent.model_copy(update={"suspended": True})
        checked.append(agent)
    for agent in checked:
        if agent.verdict in alerts.on and (alerts.command or alerts.webhook):
            notes += send(alerts, _payload(report, agent, agent.verdict))
    return report.model_copy(update={"agents": checked, "notes": notes})


def _record_unrecorded(proj: Project, known: dict[str, _Agent], report: DriftReport) -> list[str]:
    """Record the ``agent_suspended`` event of each agent ``mir drift`` suspended whose
    event is missing (the check that suspended it was killed between the state file and
    the trace store); returns their names. Under the store's exclusive lock, so checks
    racing here write it once between them: the next one to hold the lock reads it."""
    ours = {n: a for n, a in known.items() if a.suspended and a.by == "mir drift" and a.at}
    if not ours:
        return []
    missing = []
    with (
        TraceStore.for_project(proj) as traces,
        traces.analysis(write=True, tables=tables.TABLES) as (con, events, _),
    ):
        recorded = storage.recorded_suspensions(con, events, sorted(ours))
        for name, entry in sorted(ours.items()):
            since = datetime.fromisoformat(entry.at or "")
            if any(reason == entry.reason and at >= since for reason, at in recorded[name]):
                continue
            drifted = next((a for a in report.agents if a.agent == name), None)
            # appended (and its segment closed) before the lock is released
            _trace_suspension(proj, name, drifted, entry.reason or "", report, recovered=True)
            missing.append(name)
    return missing


def _trace_suspension(
    proj: Project,
    name: str,
    agent: AgentDrift | None,
    reason: str,
    report: DriftReport,
    *,
    recovered: bool = False,
) -> None:
    data: dict[str, Any] = {
        "event": "agent_suspended",
        "by": "mir drift",
        "reason": reason,
        "run_id": report.run_id,
    }
    if recovered:  # written by a later run: its windows and metrics are not the cause
        data["recovered"] = True
    elif agent is not None:
        data |= {
            "metrics": [
                m.model_dump(mode="json", include={"metric", "kind", "value", "p_value", "suspend"})
                for m in agent.tripped("suspend")
            ],
            "reference": agent.reference.model_dump(mode="json"),
            "current": agent.current.model_dump(mode="json"),
        }
    event = TraceEvent(
        flow_id=uuid4().hex,
        seq=0,
        step="route",
        agent=name,
        reasons=("agent_suspended",),
        data=data,
    )
    with TraceStore.for_project(proj) as traces:
        traces.append([event])
