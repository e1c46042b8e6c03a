"""SQL over the trace store: one registry model's decisions per arm (production, canary).

A flow's arm is the ``data.registry.arm`` of its first ``infer`` event naming the model
(the runtime records it on every attempt); its outcome is its ``final`` event. Only
production flows count (``mir.traces.production_finals``): eval runs, promotion-gate
runs, shadow flows and replays of recorded answers say nothing about the model in
production. DuckDB aggregates; Python sees one row per arm.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from mir.project import Project, find_project
from mir.releases.evidence import ArmStats
from mir.runtime import RETRYABLE as _RUNTIME_RETRYABLE
from mir.traces import TraceStore, production_finals

RETRYABLE = sorted(code.value for code in _RUNTIME_RETRYABLE)

_ARMS = """
WITH arms AS (
  SELECT flow_id,
    arg_min(data->>'$.registry.arm', seq) AS arm,
    arg_min(data->>'$.registry.version', seq) AS version
  FROM ({infers})
  WHERE (data->>'$.registry.name') = $name
  GROUP BY flow_id
), finals AS (
  SELECT flow_id, status, reasons, provider,
    TRY_CAST(data->>'$.record.latency_ms' AS DOUBLE) AS latency_ms,
    TRY_CAST(data->>'$.record.tokens' AS DOUBLE) AS tokens
  FROM ({finals})
), flows AS (
  SELECT arm, version, status, provider, latency_ms, tokens,
    list_has_any(reasons, $retryable) AS integrity_failure,
    status = 'fallback' OR provider = 'rules' AS fallback,
    list_contains(reasons, 'rejected_by_reviewer') AS override
  FROM arms JOIN finals USING (flow_id)
)
SELECT arm, mode(version), count(*),
  count(*) FILTER (WHERE NOT integrity_failure AND NOT fallback),
  count(*) FILTER (WHERE integrity_failure),
  count(*) FILTER (WHERE fallback),
  count(*) FILTER (WHERE override),
  quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), avg(tokens)
FROM flows GROUP BY arm
"""


def arm_stats(con: Any, events: Any, name: str, since: datetime | None) -> dict[str, ArmStats]:
    """Per-arm counts of model ``name`` from an open analysis view."""
    when = ' AND "at" >= $since' if since is not None else ""
    params: dict[str, Any] = {"name": name, "retryable": RETRYABLE}
    if since is not None:
        params["since"] = since
    sql = _ARMS.replace("{infers}", events("step = 'infer'" + when)).replace(
        "{finals}", production_finals(events, "true" + when)
    )
    out = {}
    for arm, version, n, valid, integ, fb, over, p50, p95, tokens in con.execute(
        sql, params
    ).fetchall():
        out[arm] = ArmStats(
            arm=arm,
            version=version,
            decisions=n,
            valid=valid,
            integrity_failure=integ,
            fallback=fb,
            override=over,
            latency_p50_ms=p50,
            latency_p95_ms=p95,
            tokens_per_decision=tokens,
        )
    return out


def empty_arm(arm: str, version: str | None = None) -> ArmStats:
    return ArmStats(
        arm=arm,
        version=version,
        decisions=0,
        valid=0,
        integrity_failure=0,
        fallback=0,
        override=0,
        latency_p50_ms=None,
        latency_p95_ms=None,
        tokens_per_decision=None,
    )


def compare_arms(
    project: Project | str | Path | None, name: str, since: datetime | None = None
) -> dict[str, ArmStats]:
    """Every arm's stats of model ``name`` in the project's traces (read-only)."""
    proj = project if isinstance(project, Project) else find_project(_path(project))
    with TraceStore.for_project(proj).analysis() as (con, events, _):
        return arm_stats(con, events, name, since)


def _path(project: str | Path | None) -> Path | None:
    return Path(project) if project is not None else None
