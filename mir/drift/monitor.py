"""The drift use cases: measure, check (the breaker), snapshot, history, watch.

The composition root of the capability: it finds the project, its agents and their
contracts, opens the trace store's analysis view, and hands each agent's windows to
``DriftQueries`` (SQL) and ``MetricVerdicts`` (statistics and verdicts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

from mir.contracts import AgentContract, load_contract
from mir.drift import rows, tables
from mir.drift.domain import (
    AgentDrift,
    DriftReport,
    Levels,
    MetricResult,
    Window,
)
from mir.drift.history_log import drift_log
from mir.drift.metrics import MetricVerdicts
from mir.drift.queries import DriftQueries, Selection
from mir.drift.rubrics import RubricGrader, not_run
from mir.drift.windows import DEFAULT_REFERENCE, DEFAULT_WINDOW, WindowOptions, parse_duration
from mir.errors import UsageError
from mir.project import Project, find_project
from mir.runtime import list_agents
from mir.traces import EventsSql, TraceStore

_TICK = timedelta(microseconds=1)


@dataclass(frozen=True)
class _Agent:
    name: str
    contract: AgentContract | None
    suspended: bool
    path: Path | None = None
    reason: str | None = None
    by: str | None = None
    at: str | None = None


def _project(project: str | Path | None) -> Project:
    return find_project(Path(project) if project is not None else None)


def _known_agents(proj: Project) -> dict[str, _Agent]:
    """Agents with a contract (a broken one is a config error: its thresholds are unknown)."""
    agents = {}
    for status in list_agents(proj.root):
        contract = path = None
        if status.contract is not None:
            path = proj.root / status.contract
            contract = load_contract(path)
        agents[status.name] = _Agent(
            status.name,
            contract,
            status.suspended,
            path,
            status.reason,
            status.by,
            status.at,
        )
    return agents


def _resolve(names: Sequence[str], known: Sequence[str]) -> list[str]:
    resolved = []
    for name in names:
        if name in known:
            resolved.append(name)
            continue
        same = [k for k in known if k.rpartition(".")[2] == name]
        if len(same) != 1:
            listing = ", ".join(known) or "none"
            raise UsageError(
                f"no agent {name!r} in this project or its traces", hint=f"agents: {listing}"
            )
        resolved.append(same[0])
    return list(dict.fromkeys(resolved))


def _trace_agents(con: Any, events: EventsSql) -> list[str]:
    source = events("step = 'snapshot'")
    # agents with production flows only: a judge (`--rubrics`, `mir eval`) traces eval
    # flows under its own name, and those are never decisions to measure. The distinct
    # agents first (no payload read), then per agent the FIRST production snapshot
    # (LIMIT 1 stops the scan there; a substring test first, so only a snapshot naming
    # another source is parsed): 0.11 s -> a few ms over 1M flows of one agent.
    agents = [
        r[0]
        for r in con.execute(
            f"SELECT DISTINCT agent FROM ({source}) WHERE agent IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    production = (
        'NOT contains(data, \'"source"\') OR contains(data, \'"source":"production"\') '
        'OR contains(data, \'"source": "production"\') '
        "OR coalesce(data->>'$.source', 'production') = 'production'"
    )
    return [
        agent
        for agent in agents
        if con.execute(
            f"SELECT 1 FROM ({source}) WHERE agent = $agent AND ({production}) LIMIT 1",
            {"agent": agent},
        ).fetchone()
    ]


def _selection(
    options: WindowOptions, now: datetime, frozen: tuple[datetime, datetime, int] | None
) -> tuple[Selection, datetime | None, Window, Window]:
    """The two windows, and the earliest time any of them can reach (pushed into the scan)."""
    if options.last is not None:
        if frozen is not None:
            ref = Window(label=f"snapshot {options.reference}", start=frozen[0], end=frozen[1])
            sel = Selection(
                current_last=options.last,
                reference_start=frozen[0],
                reference_end=frozen[1] + _TICK,
            )
            return sel, None, ref, Window(label=f"last {options.last}")
        reference_last = options.reference_last or options.last * 10
        sel = Selection(current_last=options.last, reference_last=reference_last)
        return (
            sel,
            None,
            Window(label=f"{reference_last} before"),
            Window(label=f"last {options.last}"),
        )
    span = parse_duration(options.window or DEFAULT_WINDOW, "--window")
    current_start = now - span
    current = Window(label=options.window or DEFAULT_WINDOW, start=current_start, end=now)
    if frozen is not None:
        sel = Selection(current_start, now, frozen[0], frozen[1] + _TICK)
        ref = Window(label=f"snapshot {options.reference}", start=frozen[0], end=frozen[1])
        return sel, min(frozen[0], current_start), ref, current
    back = parse_duration(options.reference or DEFAULT_REFERENCE, "--reference")
    reference = Window(
        label=options.reference or DEFAULT_REFERENCE, start=current_start - back, end=current_start
    )
    sel = Selection(current_start, now, current_start - back, current_start)
    return sel, current_start - back, reference, current


def _verdicts(contract: AgentContract | None) -> MetricVerdicts:
    if contract is None:
        return MetricVerdicts()
    drift = contract.drift
    overrides = {
        name: Levels(warn=level.warn, suspend=level.suspend)
        for name, level in drift.thresholds.items()
    }
    return MetricVerdicts(min_samples=drift.min_samples, alpha=drift.alpha, overrides=overrides)


def _limits(contract: AgentContract | None) -> list[tuple[str, str, float | None, float | None]]:
    if contract is None:
        return []
    return [
        (action, field, limit.minimum, limit.maximum)
        for action, spec in contract.actions.items()
        for field, limit in spec.limits.items()
        if limit.minimum is not None or limit.maximum is not None
    ]


def _measure_agent(
    queries: DriftQueries,
    agent: str,
    contract: AgentContract | None,
    options: WindowOptions,
    now: datetime,
    frozen: tuple[datetime, datetime, int] | None,
    grader: RubricGrader | None = None,
    contract_path: Path | None = None,
) -> AgentDrift:
    """One agent's metrics; ``queries.select`` has run for it already. ``grader``: grade
    the contract's rubrics (``--rubrics``); without it they are listed as not run."""
    _, _, reference, current = _selection(options, now, frozen)
    queries.use(agent)
    bounds = queries.bounds()
    ref_b, cur_b = bounds["reference"], bounds["current"]
    if options.last is not None:  # count windows: their times are what was found
        reference = reference.model_copy(update={"start": ref_b.first, "end": ref_b.last})
        current = current.model_copy(update={"start": cur_b.first, "end": cur_b.last})
    resumed = queries.resumed.get(agent)
    if resumed is not None and (
        cur_b.n < options.last
        if options.last is not None
        else current.start is None or resumed > current.start
    ):
        # a resume started a new window: only the decisions since count
        label = f"{current.label} since resumed {resumed:%Y-%m-%d %H:%M}"
        update: dict[str, Any] = {"label": label}
        if options.last is None:
            update["start"] = min(resumed, now)
        current = current.model_copy(update=update)
    reference = reference.model_copy(update={"decisions": ref_b.n})
    current = current.model_copy(update={"decisions": cur_b.n})
    if not ref_b.n and not cur_b.n:
        return AgentDrift(agent=agent, reference=reference, current=current)
    metrics, causes = agent_metrics(queries, contract, (ref_b.n, cur_b.n))
    if contract is not None and contract.drift.rubrics:
        if grader is not None and contract_path is not None:
            metrics += grader.metrics(agent, contract, contract_path, _verdicts(contract))
        else:
            metrics += not_run(contract)
    return AgentDrift(
        agent=agent, reference=reference, current=current, metrics=metrics, likely_causes=causes
    )


def agent_metrics(
    queries: DriftQueries, contract: AgentContract | None, n: tuple[int, int]
) -> tuple[list[MetricResult], list[str]]:
    """Every metric over the windows in ``drift_flows``, and the likely causes."""
    verdicts = _verdicts(contract)
    action_field = contract.decision.action_field if contract else "action"
    confidence_field = contract.decision.confidence_field if contract else "confidence"
    metrics = verdicts.categorical("action", "action", queries.categories(action_field))
    fields = queries.fields()
    numeric = [name for name, kind in sorted(fields.items()) if kind == "numeric"]
    measured = queries.numerics(numeric)
    if fields.get(confidence_field) == "numeric":
        metrics += verdicts.numeric("confidence", "confidence", measured[confidence_field])
    for name, kind in sorted(fields.items()):
        if name in (action_field, confidence_field):
            continue
        if kind == "categorical":
            metrics += verdicts.categorical(
                f"field.{name}", "categorical", queries.categories(name)
            )
        else:
            metrics += verdicts.numeric(f"field.{name}", "numeric", measured[name])
    for name, hits in queries.rates().items():
        metrics.append(verdicts.rate(f"rate.{name}", hits))
    costs = queries.costs()
    for name in ("latency.p50", "latency.p95", "latency.p99", "tokens.mean", "cost.mean"):
        ref_value = costs.get("reference", {}).get(name)
        cur_value = costs.get("current", {}).get(name)
        metrics.append(verdicts.ratio(name, ref_value, cur_value, n))
    hugging = queries.limit_hugging(action_field, _limits(contract))
    if hugging is not None:
        (hr, nr), (hc, nc) = hugging["reference"], hugging["current"]
        metrics.append(verdicts.rate("limits.hugging", (hr, nr, hc, nc), family="limits.hugging"))
    causes = []
    for what, new in queries.changes().items():
        metrics.append(verdicts.change(what, new, n))
        if n[0]:  # with no reference decisions, everything is "new": no cause to name
            causes += [f"new {what}: {item}" for item in new]
    return metrics, causes


def _resumed(known: dict[str, _Agent]) -> dict[str, datetime]:
    """Agents an operator resumed, and when: an active agent with a recorded state was
    resumed then (only a resume records an active state)."""
    out = {}
    for name, agent in known.items():
        if not agent.suspended and agent.at:
            try:
                at = datetime.fromisoformat(agent.at)
            except (TypeError, ValueError):  # a hand-edited state file: no time to start from
                continue
            out[name] = at if at.tzinfo else at.replace(tzinfo=UTC)  # (mir writes UTC)
    return out


def _rows_note(con: Any, writable: bool) -> str:
    """Drift's parsed rows held a row no query could read: this run parsed the events;
    a writing run rebuilds the rows from them (derived data, nothing is lost)."""
    if writable:
        rows.rebuild(con)
        return "drift's parsed rows (drift_rows) were damaged: read from the events, and rebuilt"
    return (
        "drift's parsed rows (drift_rows) are damaged: read from the events "
        "(a run that can write the store rebuilds them)"
    )


def measure(
    project: str | Path | None = None,
    agents: Sequence[str] = (),
    options: WindowOptions | None = None,
    *,
    store: bool = True,
) -> DriftReport:
    """Every metric of the agents (all agents with decisions when none is named); the rows
    are written to ``drift_metrics`` when the store is writable."""
    options = options or WindowOptions()
    options.check()
    proj = _project(project)
    known = _known_agents(proj)
    now = options.now or datetime.now(UTC)
    report_id = uuid4().hex
    results: list[AgentDrift] = []
    notes: list[str] = []
    stored = False
    with (
        TraceStore.for_project(proj) as traces,
        traces.analysis(write=store, tables=tables.TABLES) as (con, events, writable),
    ):
        lake_kept = False
        if writable:  # parse the final events stored since the last run, once (rows.py)
            rows.ingest(con)
            lake_kept = rows.ingest_lake(con, events)
        in_traces = _trace_agents(con, events)
        chosen = _resolve(agents, sorted({*known, *in_traces})) if agents else in_traces
        if not in_traces:
            notes.append("no decisions yet")
        queries = DriftQueries(con, events)
        queries.lake_kept = lake_kept
        log = drift_log(proj, con)
        queries.resumed = _resumed(known)
        grader = RubricGrader(con, events, proj) if options.rubrics else None
        if options.frozen_reference is None and chosen:  # one pass for every agent
            selection, since, _, _ = _selection(options, now, None)
            queries.select(chosen, selection, since)
        for name in chosen:
            agent = known.get(name)
            frozen = None
            if options.frozen_reference is not None:
                frozen = log.load_reference(name, options.frozen_reference)
                if frozen is None:
                    saved = ", ".join(log.reference_names(name)) or "none"
                    raise UsageError(
                        f"no frozen reference {options.frozen_reference!r} for {name}",
                        hint=f"saved: {saved}; create one with `mir drift snapshot {name} "
                        f"{options.frozen_reference}`",
                    )
                selection, since, _, _ = _selection(options, now, frozen)
                queries.select([name], selection, since)
            result = _measure_agent(
                queries,
                name,
                agent.contract if agent else None,
                options,
                now,
                frozen,
                grader,
                agent.path if agent else None,
            )
            if not result.metrics:
                notes.append(f"{name}: no production decisions in these windows")
            results.append(result)
        if grader is not None:
            notes += grader.notes
        if queries.damaged_rows:
            notes.append(_rows_note(con, writable))
        report = DriftReport(run_id=report_id, at=now, agents=results, notes=notes)
        if store and (writable or log.shared) and results:
            failed = log.store_report(report, options.describe())
            stored = failed is None
            notes += [failed] if failed else []
        elif store and results:
            notes.append("the trace store is read-only: this run was not recorded")
    return report.model_copy(update={"stored": stored, "notes": notes})
