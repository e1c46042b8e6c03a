"""Which flows are evidence: SQL selecting the events of production flows only.

A flow's source is written into its snapshot and its final event (``data.source``:
``production``, ``eval``, ``shadow`` or ``replay``). Only production flows say anything
about a model in production: drift and the release comparisons count those alone. A
final event from before finals carried the source falls back to its snapshot's (absent
there too: production, the rule stores were written under).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mir.errors import UsageError
from mir.traces import database
from mir.traces.domain import FLOW_STATUSES, UNFINISHED, EventsSql

# A snapshot naming a source other than production: a substring test first, so only
# the rare candidates are parsed (every snapshot of a large store is read otherwise).
_NOT_PRODUCTION_SNAPSHOT = (
    'contains(data, \'"source"\') AND NOT contains(data, \'"source":"production"\') '
    'AND NOT contains(data, \'"source": "production"\') '
    "AND coalesce(data->>'$.source', 'production') <> 'production'"
)


def production_finals(events: EventsSql, where: str = "true") -> str:
    """SQL of the ``final`` events (every column of ``events``) matching ``where`` whose
    flow is a production one."""
    finals = events(f"({where}) AND step = 'final'")
    # no time bound on the snapshots: a legacy flow's snapshot may precede the window
    legacy = events(f"step = 'snapshot' AND {_NOT_PRODUCTION_SNAPSHOT}")
    return (
        f"SELECT * FROM ({finals}) WHERE coalesce(data->>'$.source', 'production') = "
        "'production' AND ((data->>'$.source') IS NOT NULL OR flow_id NOT IN "
        f"(SELECT flow_id FROM ({legacy})))"
    )


def flow_source_sql() -> str:
    """The aggregate giving one flow's source over its events (in a GROUP BY flow_id)."""
    return (
        "coalesce(arg_max(json_extract_string(data, '$.source'), seq) "
        "FILTER (WHERE step = 'final'), any_value(json_extract_string(data, '$.source')) "
        "FILTER (WHERE step = 'snapshot'), 'production')"
    )


@dataclass(frozen=True)
class FlowFilter:
    """Whole flows of one agent, active since a time, of some sources (``mir traces
    export --agent/--since/--source``); None: no condition."""

    agent: str | None = None
    since: datetime | None = None
    sources: tuple[str, ...] | None = None

    def where(self, events: str) -> tuple[str, dict[str, Any]]:
        """A condition on events (the SQL ``events`` of every unique event) keeping the
        events of the matching flows, and its parameters."""
        having, params = ["true"], {}
        if self.agent is not None:
            having.append("arg_min(agent, seq) = $flow_agent")
            params["flow_agent"] = self.agent
        if self.since is not None:
            having.append('max("at") >= $flow_since')
            params["flow_since"] = self.since
        if self.sources is not None:
            having.append(f"list_contains($flow_sources, {flow_source_sql()})")
            params["flow_sources"] = list(self.sources)
        if len(having) == 1:
            return "true", {}
        return (
            f"flow_id IN (SELECT flow_id FROM ({events}) GROUP BY flow_id "
            f"HAVING {' AND '.join(having)})",
            params,
        )


def filtered_events(
    has_db: bool, files: list[Path], flows: FlowFilter | None, *, lake: bool = False
) -> tuple[str, dict[str, Any]]:
    """The SQL of every unique stored event of the ``flows`` kept (all: None), and its
    parameters (``mir traces export``)."""
    everything = database.unique_events(has_db=has_db, files=files, lake=lake)
    if flows is None:
        return everything, {}
    where, params = flows.where(everything)
    return database.unique_events(has_db=has_db, files=files, where=where, lake=lake), params


# The action of a flow: its decision's, wherever a step recorded one.
_ACTION = (
    "coalesce(json_extract_string(data, '$.action'), "
    "json_extract_string(data, '$.decision.action'))"
)


def listing_sql(
    *,
    agent: str | None,
    status: str | None,
    since: datetime | None,
    limit: int,
    source: str | Sequence[str] | None,
) -> tuple[str, str, dict[str, Any]]:
    """``traces list``: the summary SQL of the flows kept (``{events}`` for the store's
    events), the condition pushed into the event scan, and the parameters."""
    if status is not None and status not in (*FLOW_STATUSES, UNFINISHED):
        raise UsageError(
            f"unknown flow status {status!r}",
            hint=f"one of {', '.join((*FLOW_STATUSES, UNFINISHED))}",
        )
    params: dict[str, Any] = {"limit": limit}
    where, outer = "true", ["true"]
    if agent is not None:
        where, params["agent"] = "agent = $agent", agent
    if status == UNFINISHED:
        outer.append("status IS NULL")
    elif status is not None:
        outer.append("status = $status")
        params["status"] = status
    if since is not None:
        outer.append("updated_at >= $since")
        params["since"] = int(since.timestamp() * 1_000_000)
    if source is not None:
        outer.append("list_contains($sources, source)")
        params["sources"] = [source] if isinstance(source, str) else list(source)
    sql = (
        "SELECT * FROM (SELECT flow_id, arg_min(agent, seq) AS agent, "
        "arg_max(status, seq) FILTER (WHERE status IS NOT NULL) AS status, "
        'epoch_us(min("at")) AS started_at, epoch_us(max("at")) AS updated_at, '
        "count(*) AS steps, "
        "arg_max(provider, seq) FILTER (WHERE provider IS NOT NULL) AS provider, "
        "arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model, "
        "sum(prompt_tokens + completion_tokens) AS tokens, sum(cost_usd) AS cost_usd, "
        f"sum(latency_ms) AS latency_ms, arg_max({_ACTION}, seq) "
        f"FILTER (WHERE {_ACTION} IS NOT NULL) AS action, "
        f"{flow_source_sql()} AS source "
        "FROM ({events}) GROUP BY flow_id) "
        f"WHERE {' AND '.join(outer)} ORDER BY updated_at DESC, flow_id LIMIT $limit"
    )
    return sql, where, params
