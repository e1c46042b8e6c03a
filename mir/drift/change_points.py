"""Change points: contract, prompt and model hashes seen in the current window and not
in the reference, listed as likely causes of what else moved."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql


class ChangePoints:
    """Part of ``DriftQueries``: reads its windows (``drift_scope`` / ``drift_flows``)."""

    con: duckdb.DuckDBPyConnection
    events: EventsSql
    agent: str
    agents: list[str]
    since: datetime | None
    _time_side: str | None
    _hashes: dict[tuple[str, str], list[str]] | None
    legacy: bool
    unlisted_prompts: bool

    def changes(self) -> dict[str, list[str]]:
        """Hashes (contract, prompt, model) seen in the current window and not before it."""
        if self._time_side is not None:  # time windows: every agent at once
            if self._hashes is None:
                self._hashes = self._all_changes()
            return {
                n: self._hashes.get((self.agent, n), []) for n in ("contract", "prompt", "model")
            }
        out = {}
        for name in ("contract", "prompt", "model"):
            if name in self._in_scope:
                x = f'SELECT side, {self._in_scope[name]} AS h, "at" FROM drift_flows'
            else:
                x = (
                    f"SELECT d.side, s.h, d.at FROM ({self._hash_source(name, self.agent)}) s "
                    "JOIN drift_flows d USING (flow_id)"
                )
            rows = self.con.execute(
                f"WITH x AS (SELECT * FROM ({x}) WHERE h IS NOT NULL AND side IS NOT NULL) "
                "SELECT h, min(\"at\") FROM x WHERE side = 'current' AND h NOT IN "
                "(SELECT h FROM x WHERE side = 'reference') GROUP BY h ORDER BY 2",
                {"agents": [self.agent], **({"since": self.since} if self.since else {})}
                if name not in self._in_scope
                else {},
            ).fetchall()
            out[name] = [_new(value, first) for value, first in rows]
        return out

    @property
    def _in_scope(self) -> dict[str, str]:
        """The hashes the flows' final events carry (read from ``drift_scope``, no scan of
        other events): the model (a rules fallback names none), the contract unless a
        legacy flow in the windows has it in its snapshot only, and the prompts unless
        a flow's final event lists none (then its infer events say)."""
        found = {"model": "CASE WHEN NOT fallback THEN model END"}
        if not self.legacy:
            found["contract"] = "contract_hash"
        if not self.unlisted_prompts:
            found["prompt"] = "unnest(prompt_hashes)"
        return found

    def _hash_source(self, name: str, agent: str | None = None) -> str:
        where = "list_contains($agents, agent)"
        if self.since is not None:
            where += ' AND "at" >= $since'
        if name == "contract":
            snapshots = self.events(f"{where} AND step = 'snapshot'")
            return (
                f"SELECT agent, flow_id, \"at\", data->>'$.contract_hash' AS h FROM ({snapshots})"
            )
        infers = self.events(f"{where} AND step = 'infer' AND prompt_hash IS NOT NULL")
        return f'SELECT agent, flow_id, "at", prompt_hash AS h FROM ({infers})'

    def _all_changes(self) -> dict[tuple[str, str], list[str]]:
        assert self._time_side is not None
        params: dict[str, Any] = {"agents": self.agents}
        if self.since is not None:
            params["since"] = self.since
        found: dict[tuple[str, str], list[str]] = {}
        for name in ("contract", "prompt", "model"):
            if name in self._in_scope:
                x = f'SELECT agent, side, {self._in_scope[name]} AS h, "at" FROM drift_scope'
                p: dict[str, Any] = {}
            else:
                # the windows' production flows only (joined on drift_scope): an eval run
                # of an edited prompt is no new prompt of production
                x = (
                    f'SELECT s.agent, d.side, s.h, s."at" FROM ({self._hash_source(name)}) s '
                    "JOIN drift_scope d USING (flow_id)"
                )
                p = params
            # one grouped pass (seen in the current window, never in the reference), not
            # an anti-join of the scan with itself: about half the time over 1M flows
            rows = self.con.execute(
                f"SELECT agent, h, min(\"at\") FILTER (WHERE side = 'current') AS first "
                f"FROM ({x}) WHERE h IS NOT NULL AND side IS NOT NULL GROUP BY agent, h "
                "HAVING bool_or(side = 'current') AND NOT bool_or(side = 'reference') ORDER BY 3",
                p,
            ).fetchall()
            for agent, value, first in rows:
                found.setdefault((agent, name), []).append(_new(value, first))
        return found


def _new(value: str, first: datetime) -> str:
    return f"{value} (from {first:%Y-%m-%d %H:%M})"
