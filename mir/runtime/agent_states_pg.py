"""Agent states (active / SUSPENDED) on the fleet store: one row per agent in
``mir.agent_states``, shared by every host of a project.

Read from Postgres before every decision (no cache), so a suspension written on one
host is what every other host sees at its next decision. A change is one upsert: the
last writer's state is the agent's state, as with ``agents.json``. The server
unreachable is ``StoreUnavailable``: the decision fails closed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mir.storage import FleetStore, Migration, ScopedStore

MIGRATIONS = (
    Migration(
        "0001_create_agent_states",
        "CREATE TABLE IF NOT EXISTS agent_states (agent TEXT PRIMARY KEY, "
        "state TEXT NOT NULL, reason TEXT, by TEXT, at TEXT NOT NULL)",
    ),
)


class PostgresAgentStates:
    """``AgentStateStore`` on ``store``."""

    def __init__(self, store: FleetStore):
        self.url = store.url
        self._handle = ScopedStore(store, "agent_states", MIGRATIONS)

    def _store(self) -> FleetStore:
        return self._handle.get()

    def read(self) -> dict[str, dict[str, Any]]:
        with self._store().connection() as con:
            rows = con.execute("SELECT agent, state, reason, by, at FROM agent_states").fetchall()
        return {a: {"state": s, "reason": r, "by": b, "at": at} for a, s, r, b, at in rows}

    def is_suspended(self, agent: str) -> bool:
        with self._store().connection() as con:
            row = con.execute(
                "SELECT state FROM agent_states WHERE agent = %s", (agent,)
            ).fetchone()
        return row is not None and row[0] == "suspended"

    def set(self, agent: str, state: str, *, reason: str | None, by: str) -> dict[str, Any]:
        entry = {"state": state, "reason": reason, "by": by, "at": datetime.now(UTC).isoformat()}
        with self._store().connection() as con:
            con.execute(
                "INSERT INTO agent_states (agent, state, reason, by, at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (agent) DO UPDATE SET "
                "state = excluded.state, reason = excluded.reason, by = excluded.by, "
                "at = excluded.at",
                (agent, state, reason, by, entry["at"]),
            )
        return entry
