"""SQL over the trace store: production vs shadow, paired by flow.

A shadow flow's snapshot says ``data.source == "shadow"`` and ``data.shadow_of == <the
production flow id>``; its ``infer`` events name the model with arm ``shadow``. Each pair
compares the two flows' ``final`` records (the production side only when it is a
production flow, ``mir.traces.production_finals``: a replay's shadow is no evidence):
the action, every decision field, whether the proposal was valid (no retryable
model-output reason, not decided by rules), latency and tokens. DuckDB aggregates;
Python sees one row per side and one per field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from mir.releases.arms import RETRYABLE
from mir.traces import production_finals

_PAIRS = """
CREATE OR REPLACE TEMP TABLE release_pairs AS
WITH shadows AS (
  SELECT flow_id AS shadow_id, any_value(data->>'$.shadow_of') AS production_id
  FROM ({snapshots})
  WHERE (data->>'$.source') = 'shadow' AND (data->>'$.shadow_of') IS NOT NULL
  GROUP BY flow_id
), named AS (
  SELECT DISTINCT flow_id FROM ({infers})
  WHERE (data->>'$.registry.name') = $name AND (data->>'$.registry.arm') = 'shadow'
), finals AS (
  SELECT flow_id, coalesce(data->>'$.source', 'shadow') = 'shadow' AS shadow_side,
    NOT list_has_any(reasons, $retryable) AND status <> 'fallback'
      AND coalesce(provider, '') <> 'rules' AS valid,
    data->'$.record.decision' AS decision,
    data->>'$.record.action' AS action,
    TRY_CAST(data->>'$.record.latency_ms' AS DOUBLE) AS latency_ms,
    TRY_CAST(data->>'$.record.tokens' AS DOUBLE) AS tokens
  FROM ({finals})
)
SELECT s.shadow_id, s.production_id,
  p.valid AS p_valid, p.decision AS p_decision, p.action AS p_action,
  p.latency_ms AS p_latency, p.tokens AS p_tokens,
  h.valid AS s_valid, h.decision AS s_decision, h.action AS s_action,
  h.latency_ms AS s_latency, h.tokens AS s_tokens
FROM shadows s JOIN named n ON n.flow_id = s.shadow_id
JOIN ({production}) pf ON pf.flow_id = s.production_id
JOIN finals p ON p.flow_id = s.production_id
JOIN finals h ON h.flow_id = s.shadow_id AND h.shadow_side
"""
_SIDES = """
SELECT count(*),
  count(*) FILTER (WHERE p_action IS NOT DISTINCT FROM s_action),
  count(*) FILTER (WHERE p_valid), count(*) FILTER (WHERE s_valid),
  quantile_cont(p_latency, 0.5), quantile_cont(p_latency, 0.95),
  quantile_cont(s_latency, 0.5), quantile_cont(s_latency, 0.95),
  avg(p_tokens), avg(s_tokens)
FROM release_pairs
"""
# Every field of either decision: agreement is judged over the pairs where at least one
# side has a decision (a fallback on one side disagrees on every field).
_FIELDS = """
SELECT k, count(*), count(*) FILTER (WHERE
  json_extract(p_decision, '$."' || k || '"') IS NOT DISTINCT FROM
  json_extract(s_decision, '$."' || k || '"'))
FROM (
  SELECT DISTINCT shadow_id, p_decision, s_decision,
    unnest(list_distinct(list_concat(coalesce(json_keys(p_decision), []),
                                     coalesce(json_keys(s_decision), [])))) AS k
  FROM release_pairs
) GROUP BY k ORDER BY k
"""


class ShadowSide(BaseModel):
    valid_rate: float | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    tokens_per_decision: float | None


class ShadowComparison(BaseModel):
    pairs: int
    action_agreement: float | None
    field_agreement: dict[str, float]
    production: ShadowSide
    shadow: ShadowSide


def shadow_stats(con: Any, events: Any, name: str, since: datetime | None) -> ShadowComparison:
    when = ' AND "at" >= $since' if since is not None else ""
    params: dict[str, Any] = {"name": name, "retryable": RETRYABLE}
    if since is not None:
        params["since"] = since
    sql = (
        _PAIRS.replace("{snapshots}", events("step = 'snapshot'" + when))
        .replace("{infers}", events("step = 'infer'" + when))
        .replace("{finals}", events("step = 'final'" + when))
        .replace("{production}", production_finals(events, "true" + when))
    )
    con.execute(sql, params)
    n, agree, pv, sv, p50, p95, s50, s95, pt, st = con.execute(_SIDES).fetchone()
    fields = {k: hits / total for k, total, hits in con.execute(_FIELDS).fetchall() if total}
    return ShadowComparison(
        pairs=n,
        action_agreement=agree / n if n else None,
        field_agreement=fields,
        production=ShadowSide(
            valid_rate=pv / n if n else None,
            latency_p50_ms=p50,
            latency_p95_ms=p95,
            tokens_per_decision=pt,
        ),
        shadow=ShadowSide(
            valid_rate=sv / n if n else None,
            latency_p50_ms=s50,
            latency_p95_ms=s95,
            tokens_per_decision=st,
        ),
    )
