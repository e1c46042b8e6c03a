"""SQL over the trace store: one agent's decisions per window, aggregated in DuckDB.

The store's events are folded into one row per production flow (``drift_flows``, a
temporary table holding only the two windows), and every metric is one aggregate query
over it: counts per category, rates, quantiles, and for KS / Wasserstein the two
empirical CDFs over the merged distinct values, computed with window functions. Python
only sees aggregates (``statistics.py`` turns them into distances and p-values).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mir.drift import rows as drift_rows
from mir.drift.aggregates import Aggregates
from mir.drift.change_points import ChangePoints
from mir.drift.fields import SHAPES, decision_shapes, discover, sql_literal
from mir.runtime import RETRYABLE as RUNTIME_RETRYABLE

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

# Model-output problems a retry may fix (the runtime's own list): a flow with any is a
# schema violation / retry.
RETRYABLE = sorted(code.value for code in RUNTIME_RETRYABLE)

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
    list_has_any(reasons, ['low_confidence', 'no_consensus'])
      OR contains(',' || array_to_string(reasons, ','), ',review_') AS review_requested,
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


class DriftQueries(Aggregates, ChangePoints):
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
        # A kept row could not be parsed (drift_rows edited or damaged): this run parses
        # the events instead, and a writing run rebuilds the rows (rows.rebuild).
        self.damaged_rows = False
        # drift_lake_rows cover the fleet's trace lake in this view (rows.ingest_lake)
        self.lake_kept = False
        # agent -> when an operator resumed it: its current window holds only decisions
        # from then on (a resume starts a new window; the reference is unchanged)
        self.resumed: dict[str, datetime] = {}

    # -- windows ---------------------------------------------------------------------

    def select(self, agents: Sequence[str], selection: Selection, since: datetime | None) -> None:
        """Build ``drift_scope``: the flows of both windows of every agent, each with its
        ``side``, in one pass over the events (then ``use(agent)`` picks one agent). A
        kept row that cannot be read is never fatal: the events are parsed instead."""
        import duckdb

        if self._kept is None:  # the view cannot change while it is open: ask once
            self._kept = drift_rows.complete(self.con)
        unreadable = (duckdb.InvalidInputException, duckdb.ConversionException)
        try:
            self._select(agents, selection, since)
            return
        except unreadable as exc:
            if not self._kept:
                raise drift_rows.damaged_events(exc) from exc
        self._kept, self.damaged_rows = False, True
        try:
            self._select(agents, selection, since)
        except unreadable as exc:
            raise drift_rows.damaged_events(exc) from exc

    def _select(self, agents: Sequence[str], selection: Selection, since: datetime | None) -> None:
        where = "list_contains($agents, agent)" + (' AND "at" >= $since' if since else "")
        params: dict[str, Any] = {"agents": list(agents)}
        if since is not None:
            params["since"] = since
        parsed_rows = drift_rows.source(
            self.events, where, kept=bool(self._kept), lake_kept=self.lake_kept and bool(self._kept)
        )
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
        side = self._since_resume(side, agents)
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

    def _since_resume(self, side: str, agents: Sequence[str]) -> str:
        """``side`` with the decisions a resumed agent made before its resume left out of
        its current window (they are what the breaker suspended it for)."""
        cuts = [
            f"WHEN {sql_literal(agent)} THEN {sql_literal(self.resumed[agent].isoformat())}"
            "::TIMESTAMPTZ"
            for agent in agents
            if agent in self.resumed
        ]
        if not cuts:
            return side
        cut = f"CASE agent {' '.join(cuts)} END"
        return f"CASE WHEN ({side}) = 'current' AND \"at\" < {cut} THEN NULL ELSE {side} END"

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


def decode_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
