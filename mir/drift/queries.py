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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mir.drift import rows as drift_rows
from mir.drift.change_points import ChangePoints
from mir.drift.fields import SHAPES, decision_shapes, discover, sql_literal
from mir.runtime import RETRYABLE as RUNTIME_RETRYABLE

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

# Model-output problems a retry may fix (the runtime's own list): a flow with any is a
# schema violation / retry.
RETRYABLE = sorted(code.value for code in RUNTIME_RETRYABLE)
RATES = {
    "schema_violation": "schema_violation",
    "fallback": "fallback",
    "review_requested": "review_requested",
    "human_override": "human_override",
    "stale": "stale",
    "executor_error": "executor_error",
}

# One row per finished flow, from its `final` event alone (no group-by over the flow's
# events): the final event carries the status, every reason met on the way (retries,
# review, re-check, executor), the decision, the record's wall time, tokens, cost and
# model, and the flow's source, contract hash and prompts beside the record. Flows
# still pending review are counted once they end. The events come parsed (`rows.py`:
# kept parsed in the store, or parsed now); the decision is parsed here into typed
# structs (`r.d0`, more when names collide: `fields.decision_shapes`) holding the
# decision fields found. Only
# production flows count: a final naming another source (eval, shadow) is dropped
# here, before windows counted in decisions (`--last N`) are cut, so they never take a
# production decision's place; a final from before the source was written there
# (`src` NULL) is checked against its snapshot afterwards (`_LEGACY_NOT_PRODUCTION`),
# which reads every snapshot's payload in the windows (counted windows are then cut
# again without those flows: `{legacy}`).
_FLOWS = """
CREATE OR REPLACE TEMP TABLE drift_scope AS
SELECT * FROM (
  SELECT agent, flow_id, "at", status, model, cost_usd AS cost,
    struct_pack({shapes}) AS r,
    src, contract_hash, prompt_hashes, latency_ms, tokens,
    list_has_any(reasons, $retryable) AS schema_violation,
    status = 'fallback' OR provider = 'rules' AS fallback,
    list_has_any(reasons, ['low_confidence', 'no_consensus']) AS review_requested,
    list_contains(reasons, 'rejected_by_reviewer') AS human_override,
    status = 'stale' OR list_contains(reasons, 'state_changed') AS stale,
    list_contains(reasons, 'executor_error') AS executor_error,
    {side} AS side
  FROM (SELECT *{rank} FROM ({rows}) WHERE (src IS NULL OR src = 'production'){legacy})
) WHERE side IS NOT NULL{order}
"""
# Legacy finals (no source beside the record) whose snapshot names a source other than
# "production" (eval flows): a substring test first, so only the rare candidates are
# parsed.
_LEGACY_NOT_PRODUCTION = """
SELECT flow_id FROM ({snapshots})
WHERE contains(data, '"source"') AND NOT contains(data, '"source":"production"')
  AND NOT contains(data, '"source": "production"')
  AND coalesce(data->>'$.source', 'production') <> 'production'
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


_MOST = 2**63 - 1  # decisions in a counted window, at most


class DriftQueries(ChangePoints):
    """The metric queries of one agent, over ``drift_flows`` built by ``select``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, events: EventsSql) -> None:
        self.con = con
        self.events = events
        self.agent = ""
        self.since: datetime | None = None
        self.kinds: dict[str, str] = {}
        self._members: dict[Any, int] = {}
        self.agents: list[str] = []
        self.agent_kinds: dict[str, dict[str, str]] = {}
        self._time_side: str | None = None
        self._hashes: dict[tuple[str, str], list[str]] | None = None
        # Some flow in the windows ended before finals carried their source and contract
        # hash: both are then read from the snapshots.
        self.legacy = False
        # Some flow's final event lists no prompts (written before finals did): the
        # prompt change point then reads the infer events.
        self.unlisted_prompts = False
        self._kept: bool | None = None  # drift_rows cover the store (rows.complete)

    # -- windows ---------------------------------------------------------------------

    def select(self, agents: Sequence[str], selection: Selection, since: datetime | None) -> None:
        """Build ``drift_scope``: the flows of both windows of every agent, each with its
        ``side``, in one pass over the events (then ``use(agent)`` picks one agent)."""
        where = "list_contains($agents, agent)" + (' AND "at" >= $since' if since else "")
        params: dict[str, Any] = {"agents": list(agents)}
        if since is not None:
            params["since"] = since
        if self._kept is None:  # the view cannot change while it is open: ask once
            self._kept = drift_rows.complete(self.con)
        parsed_rows = drift_rows.source(self.events, where, kept=self._kept)
        production = f"SELECT * FROM ({parsed_rows}) WHERE src IS NULL OR src = 'production'"
        self.agent_kinds = discover(self.con, production, params)
        shapes, self._members = decision_shapes(self.agent_kinds)
        # An eval flow's snapshot comes at most a day before its final event.
        snapshots = self.events(
            "list_contains($agents, agent) AND step = 'snapshot'"
            + (' AND "at" >= $since - INTERVAL 1 DAY' if since is not None else "")
        )
        rank = ""
        if selection.current_last is not None:
            rank = ', row_number() OVER (PARTITION BY agent ORDER BY "at" DESC, flow_id DESC) AS rn'
            # a count beyond any history is the history (DuckDB binds at most 128 bits)
            params["cur"] = min(selection.current_last, _MOST)
            if selection.reference_last is not None:
                side = (
                    "CASE WHEN rn <= $cur THEN 'current' "
                    # (not rn <= $cur + $ref: two huge counts overflow BIGINT)
                    "WHEN rn - $cur <= $ref THEN 'reference' END"
                )
                params["ref"] = min(selection.reference_last, _MOST)
            else:  # a frozen reference by time, the current window by count
                side = (
                    'CASE WHEN rn <= $cur THEN \'current\' WHEN "at" >= $rs AND "at" < $re '
                    "THEN 'reference' END"
                )
                params |= {"rs": selection.reference_start, "re": selection.reference_end}
        else:
            side = (
                'CASE WHEN "at" >= $cs AND "at" < $ce THEN \'current\' '
                'WHEN "at" >= $rs AND "at" < $re THEN \'reference\' END'
            )
            params |= {
                "cs": selection.current_start,
                "ce": selection.current_end,
                "rs": selection.reference_start,
                "re": selection.reference_end,
            }
        sql = (
            _FLOWS.replace("{rows}", parsed_rows)
            .replace("{side}", side)
            .replace("{rank}", rank)
            .replace(
                "{shapes}",
                ", ".join(
                    f"d{i} := json_transform(decision, $shape{i})" for i in range(len(shapes))
                ),
            )
            # sorted so `use(agent)` skips the other agents' rows; one agent needs no sort
            .replace("{order}", "\nORDER BY agent" if len(agents) > 1 else "")
        )
        params |= {"retryable": RETRYABLE}
        params |= {f"shape{i}": json.dumps(shape) for i, shape in enumerate(shapes)}
        self.con.execute(sql.replace("{legacy}", ""), params)
        row = self.con.execute(
            "SELECT count(*) FILTER (WHERE src IS NULL), "
            "count(*) FILTER (WHERE prompt_hashes IS NULL) FROM drift_scope"
        ).fetchone()
        self.legacy = bool(row and row[0])
        self.unlisted_prompts = bool(row and row[1])
        if self.legacy:
            not_production = _LEGACY_NOT_PRODUCTION.replace("{snapshots}", snapshots)
            if rank:
                # windows counted in decisions: a legacy eval flow must not take a place
                # in them, so they are cut again without those flows (legacy stores only)
                legacy = f" AND NOT (src IS NULL AND flow_id IN ({not_production}))"
                self.con.execute(sql.replace("{legacy}", legacy), params)
            else:
                self.con.execute(
                    f"DELETE FROM drift_scope WHERE src IS NULL AND flow_id IN ({not_production})",
                    {k: v for k, v in params.items() if k in ("agents", "since")},
                )
        self.agents, self.since = list(agents), since
        self._time_side = None if rank else side
        self._hashes = None

    def use(self, agent: str) -> None:
        """Point ``drift_flows`` (what every metric reads) at one agent's flows: a view over
        ``drift_scope``, which is sorted by agent so the filter skips other agents' rows."""
        self.con.execute(
            "CREATE OR REPLACE TEMP VIEW drift_flows AS SELECT * FROM drift_scope "
            f"WHERE agent = {sql_literal(agent)}"
        )
        self.agent = agent
        self.kinds = self.agent_kinds.get(agent, {})

    def bounds(self) -> dict[str, Bounds]:
        rows = self.con.execute(
            'SELECT side, min("at"), max("at"), count(*) FROM drift_flows GROUP BY side'
        ).fetchall()
        found = {side: Bounds(first, last, n) for side, first, last, n in rows}
        return {side: found.get(side, Bounds(None, None, 0)) for side in ("reference", "current")}

    # -- metrics ---------------------------------------------------------------------

    def categories(self, field: str) -> dict[str, dict[str, int]]:
        """Counts per value of a categorical field, per side."""
        if field not in self.kinds:
            return {"reference": {}, "current": {}}
        rows = self.con.execute(
            f"SELECT side, coalesce(CAST({self.field(field)} AS VARCHAR), '(none)') AS v, "
            "count(*) FROM drift_flows GROUP BY ALL"
        ).fetchall()
        out: dict[str, dict[str, int]] = {"reference": {}, "current": {}}
        for side, value, n in rows:
            out[side][value] = n
        return out

    def field(self, name: str) -> str:
        """One decision field of the parsed record (a struct; any key name is safe)."""
        shape = self._members[(name, SHAPES[self.kinds[name]])]
        return f"struct_extract(r.d{shape}, {sql_literal(name)})"

    def fields(self) -> dict[str, str]:
        """Decision fields found in the windows: name -> 'numeric' | 'categorical'."""
        return dict(self.kinds)

    def numeric(self, field: str) -> dict[str, Any]:
        """KS, Wasserstein-1, reference-decile bins and means of one numeric field."""
        return self.numerics([field])[field]

    def numerics(self, fields: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per numeric field (a flow column when the name starts with ``@``): the KS
        statistic and Wasserstein-1 (from the two empirical CDFs over the merged distinct
        values), the counts per reference-decile bin, and the means; one query for all.
        The bins are counted per distinct value (``h``), not per decision: the bin lambda
        runs ~20k times instead of ~1M (105 ms -> 48 ms over 1M stored decisions)."""
        if not fields:
            return {}
        columns = ", ".join(
            f'TRY_CAST({name[1:] if name.startswith("@") else self.field(name)} AS DOUBLE) AS "{i}"'
            for i, name in enumerate(fields)
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


def _num(value: float | None) -> str:
    return "NULL::DOUBLE" if value is None else repr(float(value))


def decode_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
