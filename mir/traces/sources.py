"""Which flows are evidence: SQL selecting the events of production flows only.

A flow's source is written into its snapshot and its final event (``data.source``:
``production``, ``eval``, ``shadow`` or ``replay``). Only production flows say anything
about a model in production: drift and the release comparisons count those alone. A
final event from before finals carried the source falls back to its snapshot's (absent
there too: production, the rule stores were written under).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.traces.store import EventsSql

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
        "'production' AND (data->>'$.source' IS NOT NULL OR flow_id NOT IN "
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
