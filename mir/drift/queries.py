"""SQL over the trace store: one agent's decisions per window, aggregated in DuckDB.

The store's events are folded into one row per production flow (``drift_flows``, a
temporary table holding only the two windows), and every metric is one aggregate query
over it: counts per category, rates, quantiles, and for KS / Wasserstein the two
empirical CDFs over the merged distinct values, computed with window functions. Python
only sees aggregates (``statistics.py`` turns them into distances and p-values).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

# Model-output problems a retry may fix: a flow with any is a schema violation / retry.
RETRYABLE = [
    "not_json",
    "truncated",
    "output_too_large",
    "invalid_utf8",
    "schema_invalid",
    "extra_field",
    "missing_field",
    "wrong_type",
    "action_not_allowed",
    "limit_exceeded",
    "confidence_invalid",
    "too_deep",
    "number_too_large",
    "binding_violated",
]
RATES = {
    "schema_violation": "schema_violation",
    "fallback": "fallback",
    "review_requested": "review_requested",
    "human_override": "human_override",
    "stale": "stale",
    "executor_error": "executor_error",
}
_NUMERIC_TYPES = "('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')"
# A categorical field with more distinct values than this is free text, not a category.
MAX_CATEGORIES = 50

_FLOWS = """
CREATE OR REPLACE TEMP TABLE drift_all AS
SELECT flow_id, min("at") AS "at",
  bool_or(step = 'snapshot') AS has_snapshot,
  coalesce(any_value(json_extract_string(data, '$.source')) FILTER (WHERE step = 'snapshot'),
           'production') AS source,
  any_value(json_extract_string(data, '$.contract_hash')) FILTER (WHERE step = 'snapshot')
    AS contract_hash,
  arg_max(prompt_hash, seq) FILTER (WHERE prompt_hash IS NOT NULL) AS prompt_hash,
  arg_max(model, seq) FILTER (WHERE step = 'infer' AND model IS NOT NULL) AS model,
  coalesce(
    arg_max(json_extract(data, '$.record.decision'), seq) FILTER (WHERE step = 'final'),
    arg_max(json_extract(data, '$.decision'), seq)
      FILTER (WHERE step IN ('route', 'fallback', 'validate', 'execute')
              AND json_extract(data, '$.decision') IS NOT NULL)) AS decision,
  bool_or(step = 'validate' AND list_has_any(reasons, $retryable)) AS schema_violation,
  bool_or(step = 'fallback') AS fallback,
  bool_or(status = 'pending_review') AS review_requested,
  bool_or(list_contains(reasons, 'rejected_by_reviewer')) AS human_override,
  bool_or(list_contains(reasons, 'state_changed')) AS stale,
  bool_or(list_contains(reasons, 'executor_error')) AS executor_error,
  sum(latency_ms) AS latency_ms,
  sum(prompt_tokens + completion_tokens) AS tokens,
  sum(cost_usd) FILTER (WHERE step = 'infer') AS cost
FROM ({events})
GROUP BY flow_id
HAVING has_snapshot AND source = 'production'
"""


@dataclass(frozen=True)
class Selection:
    """How the two windows are cut (times are exclusive ends)."""

    current_start: datetime | None = None
    current_end: datetime | None = None
    reference_start: datetime | None = None
    reference_end: datetime | None = None
    current_last: int | None = None
    reference_last: int | None = None


@dataclass(frozen=True)
class Bounds:
    first: datetime | None
    last: datetime | None
    n: int


def _path(field: str) -> str:
    """A JSON path literal for one top-level key (quoted: keys may hold dots)."""
    return "'$.\"" + field.replace("'", "''").replace('"', '\\"') + "\"'"


class DriftQueries:
    """The metric queries of one agent, over ``drift_flows`` built by ``select``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, events: Callable[[str], str]) -> None:
        self.con = con
        self.events = events

    # -- windows ---------------------------------------------------------------------

    def select(self, agent: str, selection: Selection, since: datetime | None) -> None:
        where = "agent = $agent" + (' AND "at" >= $since' if since is not None else "")
        params: dict[str, Any] = {"agent": agent, "retryable": RETRYABLE}
        if since is not None:
            params["since"] = since
        self.con.execute(_FLOWS.replace("{events}", self.events(where)), params)
        if selection.current_last is not None:
            side = (
                "CASE WHEN rn <= $cur THEN 'current' "
                "WHEN rn <= $cur + $ref AND $ref_by_count THEN 'reference' END"
            )
            self.con.execute(
                "CREATE OR REPLACE TEMP TABLE drift_ranked AS SELECT *, row_number() OVER "
                '(ORDER BY "at" DESC, flow_id DESC) AS rn FROM drift_all'
            )
            ref_by_count = selection.reference_last is not None
            if not ref_by_count:  # a frozen reference by time, the current one by count
                side = (
                    'CASE WHEN rn <= $cur THEN \'current\' WHEN "at" >= $rs AND "at" < $re '
                    "THEN 'reference' END"
                )
            sql = (
                f"CREATE OR REPLACE TEMP TABLE drift_flows AS SELECT * FROM "
                f"(SELECT *, {side} AS side FROM drift_ranked) WHERE side IS NOT NULL"
            )
            p: dict[str, Any] = {"cur": selection.current_last}
            if ref_by_count:
                p |= {"ref": selection.reference_last, "ref_by_count": True}
            else:
                p |= {"rs": selection.reference_start, "re": selection.reference_end}
            self.con.execute(sql, p)
            return
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE drift_flows AS SELECT * FROM (SELECT *, CASE "
            'WHEN "at" >= $cs AND "at" < $ce THEN \'current\' '
            'WHEN "at" >= $rs AND "at" < $re THEN \'reference\' END AS side '
            "FROM drift_all) WHERE side IS NOT NULL",
            {
                "cs": selection.current_start,
                "ce": selection.current_end,
                "rs": selection.reference_start,
                "re": selection.reference_end,
            },
        )

    def bounds(self) -> dict[str, Bounds]:
        rows = self.con.execute(
            'SELECT side, min("at"), max("at"), count(*) FROM drift_flows GROUP BY side'
        ).fetchall()
        found = {side: Bounds(first, last, n) for side, first, last, n in rows}
        return {side: found.get(side, Bounds(None, None, 0)) for side in ("reference", "current")}

    def all_bounds(self) -> Bounds:
        row = self.con.execute('SELECT min("at"), max("at"), count(*) FROM drift_all').fetchone()
        assert row is not None
        return Bounds(row[0], row[1], row[2])

    # -- metrics ---------------------------------------------------------------------

    def categories(self, field: str) -> dict[str, dict[str, int]]:
        """Counts per value of a categorical field, per side."""
        rows = self.con.execute(
            f"SELECT side, coalesce(json_extract_string(decision, {_path(field)}), '(none)') "
            "AS v, count(*) FROM drift_flows WHERE decision IS NOT NULL GROUP BY ALL"
        ).fetchall()
        out: dict[str, dict[str, int]] = {"reference": {}, "current": {}}
        for side, value, n in rows:
            out[side][value] = n
        return out

    def fields(self) -> dict[str, str]:
        """Decision fields found in the windows: name -> 'numeric' | 'categorical'."""
        rows = self.con.execute(
            "SELECT k, count(*) FILTER (WHERE t IN " + _NUMERIC_TYPES + ") AS num, "
            "count(*) FILTER (WHERE t IN ('VARCHAR', 'BOOLEAN')) AS cat, "
            "count(DISTINCT s) AS card, count(*) AS total FROM ("
            "SELECT k, json_type(decision, '$.\"' || k || '\"') AS t, "
            "json_extract_string(decision, '$.\"' || k || '\"') AS s FROM ("
            "SELECT decision, unnest(json_keys(decision)) AS k FROM drift_flows "
            "WHERE decision IS NOT NULL AND json_type(decision) = 'OBJECT')) GROUP BY k"
        ).fetchall()
        kinds = {}
        for name, num, cat, card, total in rows:
            if num == total:
                kinds[name] = "numeric"
            elif cat == total and card <= MAX_CATEGORIES:
                kinds[name] = "categorical"
        return kinds

    def numeric(self, field: str) -> dict[str, Any]:
        """KS statistic, Wasserstein-1, reference-decile bins and means of a numeric field
        (or of a flow column when ``field`` starts with ``@``)."""
        value = (
            field[1:]
            if field.startswith("@")
            else f"TRY_CAST(json_extract(decision, {_path(field)}) AS DOUBLE)"
        )
        row = self.con.execute(
            f"""
            WITH x AS (SELECT side, {value} AS v FROM drift_flows),
            y AS (SELECT * FROM x WHERE v IS NOT NULL AND isfinite(v)),
            n AS (SELECT count(*) FILTER (WHERE side = 'reference') AS nr,
                         count(*) FILTER (WHERE side = 'current') AS nc,
                         avg(v) FILTER (WHERE side = 'reference') AS mr,
                         avg(v) FILTER (WHERE side = 'current') AS mc,
                         list_sort(list_distinct(quantile_cont(v,
                           [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
                           FILTER (WHERE side = 'reference'))) AS edges FROM y),
            h AS (SELECT v, count(*) FILTER (WHERE side = 'reference') AS r,
                         count(*) FILTER (WHERE side = 'current') AS c FROM y GROUP BY v),
            cdf AS (SELECT sum(r) OVER w / nr AS fr, sum(c) OVER w / nc AS fc,
                           lead(v) OVER (ORDER BY v) - v AS dx
                    FROM h, n WINDOW w AS (ORDER BY v ROWS UNBOUNDED PRECEDING)),
            bins AS (SELECT side, len(list_filter(edges, lambda e: e < v)) AS b, count(*) AS k
                     FROM y, n GROUP BY ALL)
            SELECT (SELECT nr FROM n), (SELECT nc FROM n), (SELECT mr FROM n),
                   (SELECT mc FROM n),
                   (SELECT max(abs(fr - fc)) FROM cdf),
                   (SELECT sum(abs(fr - fc) * coalesce(dx, 0)) FROM cdf),
                   (SELECT list(struct_pack(side, b, k)) FROM bins),
                   (SELECT len(edges) FROM n)
            """
        ).fetchone()
        assert row is not None
        nr, nc, mr, mc, ks, w1, bins, edges = row
        hist: dict[str, dict[str, int]] = {"reference": {}, "current": {}}
        for item in bins or []:
            hist[item["side"]][str(item["b"])] = item["k"]
        return {
            "n": (nr or 0, nc or 0),
            "mean": (mr, mc),
            "ks": _float(ks),
            "wasserstein": _float(w1),
            "bins": hist,
            "bin_count": (edges or 0) + 1,
        }

    def rates(self) -> dict[str, tuple[int, int, int, int]]:
        """name -> (reference hits, reference n, current hits, current n)."""
        cols = ", ".join(f"count_if({c}) AS {name}" for name, c in RATES.items())
        rows = self.con.execute(
            f"SELECT side, count(*) AS n, {cols} FROM drift_flows GROUP BY side"
        ).fetchall()
        per = {row[0]: row[1:] for row in rows}
        ref = per.get("reference", (0,) * (len(RATES) + 1))
        cur = per.get("current", (0,) * (len(RATES) + 1))
        return {name: (ref[i + 1], ref[0], cur[i + 1], cur[0]) for i, name in enumerate(RATES)}

    def costs(self) -> dict[str, dict[str, float | None]]:
        rows = self.con.execute(
            "SELECT side, quantile_cont(latency_ms, [0.5, 0.95, 0.99]), avg(tokens), "
            "avg(coalesce(cost, 0)) FROM drift_flows GROUP BY side"
        ).fetchall()
        out: dict[str, dict[str, float | None]] = {}
        for side, quantiles, tokens, cost in rows:
            q = quantiles or [None, None, None]
            out[side] = {
                "latency.p50": q[0],
                "latency.p95": q[1],
                "latency.p99": q[2],
                "tokens.mean": _float(tokens),
                "cost.mean": _float(cost),
            }
        return out

    def changes(self) -> dict[str, list[str]]:
        """Hashes (contract, prompt, model) seen in the current window and not before it."""
        out = {}
        for name, column in (
            ("contract", "contract_hash"),
            ("prompt", "prompt_hash"),
            ("model", "model"),
        ):
            rows = self.con.execute(
                f"SELECT {column}, min(\"at\") FROM drift_flows WHERE side = 'current' "
                f"AND {column} IS NOT NULL AND {column} NOT IN (SELECT {column} FROM "
                f"drift_flows WHERE side = 'reference' AND {column} IS NOT NULL) "
                "GROUP BY ALL ORDER BY 2"
            ).fetchall()
            out[name] = [f"{value} (from {first:%Y-%m-%d %H:%M})" for value, first in rows]
        return out

    def limit_hugging(
        self, action_field: str, limits: Sequence[tuple[str, str, float | None, float | None]]
    ) -> dict[str, tuple[int, int]] | None:
        """side -> (values within 5 % of a contract limit, limited values)."""
        if not limits:
            return None
        values = ", ".join(
            f"({_literal(a)}, {_literal(f)}, {_num(lo)}, {_num(hi)})" for a, f, lo, hi in limits
        )
        rows = self.con.execute(
            f"""
            WITH l(action, field, lo, hi) AS (VALUES {values}),
            x AS (SELECT side, lo, hi, TRY_CAST(json_extract(d.decision,
                    '$."' || l.field || '"') AS DOUBLE) AS v,
                    coalesce(hi - lo, abs(coalesce(hi, lo)), 1) AS span
                  FROM drift_flows d JOIN l
                  ON json_extract_string(d.decision, {_path(action_field)}) = l.action)
            SELECT side, count_if((hi IS NOT NULL AND v >= hi - 0.05 * span)
                               OR (lo IS NOT NULL AND v <= lo + 0.05 * span)), count(*)
            FROM x WHERE v IS NOT NULL GROUP BY side
            """
        ).fetchall()
        found = {side: (hits, n) for side, hits, n in rows}
        return {s: found.get(s, (0, 0)) for s in ("reference", "current")}


def _float(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _num(value: float | None) -> str:
    return "NULL::DOUBLE" if value is None else repr(float(value))


def decode_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
