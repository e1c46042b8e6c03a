"""The aggregate metric queries over ``drift_flows`` (one agent's flows of both windows):
numeric distributions (KS, Wasserstein, decile bins), rates, costs and limit hugging.
Python only sees aggregates (``statistics.py`` turns them into distances and p-values)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mir.drift.fields import sql_literal

if TYPE_CHECKING:
    import duckdb

RATES = {
    "schema_violation": "schema_violation",
    "fallback": "fallback",
    "review_requested": "review_requested",
    "human_override": "human_override",
    "stale": "stale",
    "executor_error": "executor_error",
}


class Aggregates:
    """Mixed into ``DriftQueries``: each metric is one aggregate query over ``drift_flows``."""

    con: duckdb.DuckDBPyConnection
    kinds: dict[str, str]

    def field(self, name: str) -> str:  # (DriftQueries: the struct member of a field)
        raise NotImplementedError

    def numeric(self, field: str) -> dict[str, Any]:
        """KS, Wasserstein-1, reference-decile bins and means of one numeric field."""
        return self.numerics([field])[field]

    def numerics(self, fields: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per numeric decision field (any key name, ``@`` included: always read as a
        field of the decision, never spliced into the SQL as a column): the KS
        statistic and Wasserstein-1 (from the two empirical CDFs over the merged distinct
        values), the counts per reference-decile bin, and the means; one query for all.
        The bins are counted per distinct value (``h``), not per decision: the bin lambda
        runs ~20k times instead of ~1M (105 ms -> 48 ms over 1M stored decisions)."""
        if not fields:
            return {}
        columns = ", ".join(
            f'TRY_CAST({self.field(name)} AS DOUBLE) AS "{i}"' for i, name in enumerate(fields)
        )
        names = ", ".join(f'"{i}"' for i in range(len(fields)))
        rows = self.con.execute(
            f"""
            WITH x AS (UNPIVOT (SELECT side, {columns} FROM drift_flows)
                       ON {names} INTO NAME f VALUE v),
            y AS (SELECT side, f, v FROM x WHERE v IS NOT NULL AND isfinite(v)),
            n AS (SELECT f, count(*) FILTER (WHERE side = 'reference') AS nr,
                         count(*) FILTER (WHERE side = 'current') AS nc,
                         avg(v) FILTER (WHERE side = 'reference') AS mr,
                         avg(v) FILTER (WHERE side = 'current') AS mc,
                         list_sort(list_distinct(quantile_cont(v,
                           [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
                           FILTER (WHERE side = 'reference'))) AS edges
                  FROM y GROUP BY f),
            h AS (SELECT f, v, count(*) FILTER (WHERE side = 'reference') AS r,
                         count(*) FILTER (WHERE side = 'current') AS c FROM y GROUP BY f, v),
            cdf AS (SELECT f, sum(r) OVER w / nr AS fr, sum(c) OVER w / nc AS fc,
                           lead(v) OVER (PARTITION BY f ORDER BY v) - v AS dx
                    FROM h JOIN n USING (f)
                    WINDOW w AS (PARTITION BY f ORDER BY v ROWS UNBOUNDED PRECEDING)),
            d AS (SELECT f, max(abs(fr - fc)) AS ks,
                         sum(abs(fr - fc) * coalesce(dx, 0)) AS w1 FROM cdf GROUP BY f),
            hb AS (SELECT f, len(list_filter(edges, lambda e: e < v)) AS b, r, c
                   FROM h JOIN n USING (f)),
            b AS (SELECT f, list(struct_pack(side, b, k)) AS bins FROM (
                    SELECT f, side, b, sum(k)::BIGINT AS k FROM (
                      SELECT f, 'reference' AS side, b, r AS k FROM hb
                      UNION ALL SELECT f, 'current' AS side, b, c AS k FROM hb)
                    WHERE k > 0 GROUP BY ALL) GROUP BY f)
            SELECT f, nr, nc, mr, mc, ks, w1, bins, len(edges)
            FROM n LEFT JOIN d USING (f) LEFT JOIN b USING (f)
            """
        ).fetchall()
        found = {int(row[0]): row[1:] for row in rows}
        out = {}
        for i, name in enumerate(fields):
            nr, nc, mr, mc, ks, w1, bins, edges = found.get(i, (0, 0, None, None) + (None,) * 4)
            hist: dict[str, dict[str, int]] = {"reference": {}, "current": {}}
            for item in bins or []:
                hist[item["side"]][str(item["b"])] = item["k"]
            out[name] = {
                "n": (nr or 0, nc or 0),
                "mean": (mr, mc),
                "ks": _float(ks),
                "wasserstein": _float(w1),
                "bins": hist,
                "bin_count": (edges or 0) + 1,
            }
        return out

    def rates(self) -> dict[str, tuple[int, int, int, int]]:
        """name -> (reference hits, reference n, current hits, current n)."""
        cols = ", ".join(f"count_if({c} IS TRUE) AS {name}" for name, c in RATES.items())
        rows = self.con.execute(
            f"SELECT side, count(*) AS n, {cols} FROM drift_flows GROUP BY side"
        ).fetchall()
        per = {row[0]: row[1:] for row in rows}
        ref = per.get("reference", (0,) * (len(RATES) + 1))
        cur = per.get("current", (0,) * (len(RATES) + 1))
        return {name: (ref[i + 1], ref[0], cur[i + 1], cur[0]) for i, name in enumerate(RATES)}

    def costs(self) -> dict[str, dict[str, float | None]]:
        """Latency quantiles, mean tokens and mean cost per side; a value no flow can have
        (negative, infinite) is left out rather than pulling the figure (a flow without
        a cost costs 0)."""
        rows = self.con.execute(
            "SELECT side, quantile_cont(latency_ms, [0.5, 0.95, 0.99]) "
            "FILTER (WHERE latency_ms >= 0 AND isfinite(latency_ms)), "
            "avg(tokens) FILTER (WHERE tokens >= 0 AND isfinite(tokens)), "
            "avg(coalesce(cost, 0)) FILTER (WHERE cost IS NULL OR cost >= 0 AND isfinite(cost)) "
            "FROM drift_flows GROUP BY side"
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

    def limit_hugging(
        self, action_field: str, limits: Sequence[tuple[str, str, float | None, float | None]]
    ) -> dict[str, tuple[int, int]] | None:
        """side -> (values within 5 % of a contract limit, limited values)."""
        if not limits:
            return None
        numeric = [lim for lim in limits if self.kinds.get(lim[1]) == "numeric"]
        if not numeric or self.kinds.get(action_field) != "categorical":
            return {"reference": (0, 0), "current": (0, 0)}
        parts = []
        for action, name, lo, hi in numeric:
            span = (hi - lo) if lo is not None and hi is not None else abs(hi or lo or 0) or 1.0
            near = []
            if hi is not None:
                near.append(f"v >= {hi - 0.05 * span!r}")
            if lo is not None:
                near.append(f"v <= {lo + 0.05 * span!r}")
            parts.append(
                f"SELECT side, TRY_CAST({self.field(name)} AS DOUBLE) AS v, "
                f"{' OR '.join(near)} AS hug "
                f"FROM drift_flows WHERE {self.field(action_field)} = {sql_literal(action)}"
            )
        rows = self.con.execute(
            f"SELECT side, count_if(hug), count(*) FROM ({' UNION ALL '.join(parts)}) "
            "WHERE v IS NOT NULL GROUP BY side"
        ).fetchall()
        found = {side: (hits, n) for side, hits, n in rows}
        return {s: found.get(s, (0, 0)) for s in ("reference", "current")}


def _float(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number
