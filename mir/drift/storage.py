"""The drift tables in the trace database (step ``0005_create_drift``, ``tables.py``).

``drift_metrics`` keeps one row per metric per agent per run, so ``mir drift history``
can plot any metric over time; ``drift_references`` keeps frozen reference windows
(``mir drift snapshot``) as the time span of the flows they covered: traces are
append-only, so the same span always selects the same decisions.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from mir.drift.domain import DriftReport, HistoryPoint

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

_COLUMNS = (
    "run_id",
    "agent",
    "metric",
    "kind",
    "reference_start",
    "reference_end",
    "current_start",
    "current_end",
    "reference_n",
    "current_n",
    "reference_value",
    "current_value",
    "value",
    "p_value",
    "warn",
    "suspend",
    "verdict",
    "window_spec",
    "at",
)
_TYPES = (
    "VARCHAR",
    "VARCHAR",
    "VARCHAR",
    "VARCHAR",
    "TIMESTAMPTZ",
    "TIMESTAMPTZ",
    "TIMESTAMPTZ",
    "TIMESTAMPTZ",
    "BIGINT",
    "BIGINT",
    "DOUBLE",
    "DOUBLE",
    "DOUBLE",
    "DOUBLE",
    "DOUBLE",
    "DOUBLE",
    "VARCHAR",
    "VARCHAR",
    "TIMESTAMPTZ",
)


def has_tables(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'drift_metrics'"
    ).fetchone()
    return bool(row and row[0])


def store_report(con: duckdb.DuckDBPyConnection, report: DriftReport, window_spec: str) -> int:
    """Every metric of every agent in one INSERT (columnar lists, one statement)."""
    columns: list[list[object]] = [[] for _ in _COLUMNS]
    for agent in report.agents:
        for m in agent.metrics:
            row = (
                report.run_id,
                agent.agent,
                m.metric,
                m.kind,
                agent.reference.start,
                agent.reference.end,
                agent.current.start,
                agent.current.end,
                m.reference_n,
                m.current_n,
                m.reference,
                m.current,
                m.value,
                m.p_value,
                m.warn,
                m.suspend,
                m.verdict,
                window_spec,
                report.at,
            )
            for column, value in zip(columns, row, strict=True):
                column.append(value)
    if not columns[0]:
        return 0
    unnests = ", ".join(f"unnest(${i}::{kind}[])" for i, kind in enumerate(_TYPES, start=1))
    names = ", ".join(f'"{c}"' for c in _COLUMNS)
    con.execute(f"INSERT INTO drift_metrics ({names}) SELECT {unnests}", columns)
    return len(columns[0])


def history(
    con: duckdb.DuckDBPyConnection, agent: str, metric: str | None, limit: int
) -> list[HistoryPoint]:
    if not has_tables(con):
        return []
    where, params = "agent = $agent", {"agent": agent, "limit": limit}
    if metric is not None:
        where += " AND metric = $metric"
        params["metric"] = metric
    rows = con.execute(
        f'SELECT "at", metric, kind, value, p_value, verdict, current_n FROM ('
        f'SELECT * FROM drift_metrics WHERE {where} ORDER BY "at" DESC LIMIT $limit) '
        'ORDER BY metric, "at"',
        params,
    ).fetchall()
    return [
        HistoryPoint(at=at, metric=m, kind=k, value=v, p_value=p, verdict=verdict, current_n=n)
        for at, m, k, v, p, verdict, n in rows
    ]


def metrics_recorded(con: duckdb.DuckDBPyConnection, agent: str) -> list[str]:
    if not has_tables(con):
        return []
    rows = con.execute(
        "SELECT DISTINCT metric FROM drift_metrics WHERE agent = ? ORDER BY 1", [agent]
    ).fetchall()
    return [r[0] for r in rows]


def save_reference(
    con: duckdb.DuckDBPyConnection,
    agent: str,
    name: str,
    first: datetime,
    last: datetime,
    flows: int,
    at: datetime,
) -> None:
    con.execute(
        "INSERT OR REPLACE INTO drift_references (agent, name, first_flow_at, last_flow_at, "
        'flows, "at") VALUES (?, ?, ?, ?, ?, ?)',
        [agent, name, first, last, flows, at],
    )


def load_reference(
    con: duckdb.DuckDBPyConnection, agent: str, name: str
) -> tuple[datetime, datetime, int] | None:
    if not has_tables(con):
        return None
    row = con.execute(
        "SELECT first_flow_at, last_flow_at, flows FROM drift_references "
        "WHERE agent = ? AND name = ?",
        [agent, name],
    ).fetchone()
    return (row[0], row[1], row[2]) if row else None


def reference_names(con: duckdb.DuckDBPyConnection, agent: str) -> list[str]:
    if not has_tables(con):
        return []
    rows = con.execute(
        "SELECT name FROM drift_references WHERE agent = ? ORDER BY name", [agent]
    ).fetchall()
    return [r[0] for r in rows]


def recorded_suspensions(
    con: duckdb.DuckDBPyConnection, events: EventsSql, agents: list[str]
) -> dict[str, list[tuple[str | None, datetime]]]:
    """(reason, time) of every ``agent_suspended`` event ``mir drift`` wrote, per agent."""
    found: dict[str, list[tuple[str | None, datetime]]] = {name: [] for name in agents}
    routes = events("step = 'route'")
    rows = con.execute(
        f"SELECT agent, json_extract_string(data, '$.reason'), \"at\" FROM ({routes}) "
        "WHERE list_contains($agents, agent) "
        "AND json_extract_string(data, '$.event') = 'agent_suspended' "
        "AND json_extract_string(data, '$.by') = 'mir drift'",
        {"agents": agents},
    ).fetchall()
    for agent, reason, at in rows:
        found[agent].append((reason, at))
    return found
