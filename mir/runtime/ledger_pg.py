"""The execution ledger on the fleet store: the same two tables as the SQLite ledger
(``mir.runtime.ledger``), in the Postgres every host of a project shares.

- First writer wins by the primary keys alone: every claim is one transaction whose
  ``INSERT ... ON CONFLICT DO NOTHING`` decides who got the key or the flow; a row met
  is locked (``FOR UPDATE``) before it is looked at. No sleeps, no advisory retries.
- A flow's holder is recorded with its process's liveness token
  (``FleetStore.hold_liveness``): a session advisory lock the server drops when that
  process dies, on whatever host. An unsettled claim whose token is no longer held is
  taken over by the next claimant; one whose process is alive never is, nor one copied
  from a local ledger (``MIGRATED``: its process cannot be asked).
- The server unreachable is ``StoreUnavailable`` (one line): the decision fails closed.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from mir.runtime.ledger import _holder  # one row shape for both backends
from mir.runtime.ports import FlowAlreadyDecided
from mir.storage import FleetStore, FlowClaim, FlowHolder, Migration

MIGRATIONS = (
    Migration(
        "0001_create_executions",
        "CREATE TABLE IF NOT EXISTS executions (key TEXT PRIMARY KEY, claimed_us BIGINT "
        "NOT NULL, info TEXT NOT NULL, outcome TEXT, completed_us BIGINT)",
    ),
    Migration(
        "0002_create_flows",
        "CREATE TABLE IF NOT EXISTS flows (flow_id TEXT PRIMARY KEY, state TEXT NOT NULL, "
        "final TEXT, by TEXT NOT NULL, at_us BIGINT NOT NULL, owner TEXT NOT NULL, "
        "host TEXT NOT NULL, pid INTEGER NOT NULL, started INTEGER, live TEXT NOT NULL)",
    ),
)
_FLOW = "SELECT flow_id, state, final, by, at_us, owner, host, pid, started, live FROM flows"
# The liveness token of a flow claim copied from a local ledger (``mir store migrate``):
# no process holds it, so an unsettled one is never taken over (fail closed, as the local
# ledger never takes over another host's claim).
MIGRATED = "migrated"
Redact = Callable[[Any], Any]


def _now_us() -> int:
    return time.time_ns() // 1000


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"), ensure_ascii=False)


class PostgresExecutionLedger:
    """``ExecutionLedger`` on ``store`` (see the module docstring)."""

    def __init__(self, store: FleetStore, *, redact: Redact | None = None):
        self.url = store.url
        self._store0 = store
        self.redact = redact or (lambda value: value)
        self._pid = os.getpid()
        self._owner = uuid.uuid4().hex[:16]  # two ledgers of one process: two holders
        self._host = socket.gethostname()
        self._ready = False
        self._claimed: dict[str, str] = {}  # key -> flow id, for complete()

    def _store(self) -> FleetStore:
        if self._pid != os.getpid():  # a forked child: its own pool, its own holder
            self._pid, self._owner, self._ready = os.getpid(), uuid.uuid4().hex[:16], False
            self._store0 = FleetStore.shared(self.url)
        if not self._ready:
            self._store0.migrate("ledger", MIGRATIONS)
            self._ready = True
        return self._store0

    def close(self) -> None:
        """Nothing of its own to close: the pool is the process's (``FleetStore``)."""

    # -- executions ----------------------------------------------------------------

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        flow_id = info.get("flow_id")
        record = _json(self.redact(dict(info)))
        store = self._store()
        live = store.hold_liveness() if flow_id is not None else ""
        with store.transaction() as con:
            if flow_id is not None:
                by = str(info.get("by", "its run"))
                row = self._hold_or_meet(con, str(flow_id), "executing", by, live)
                if row is not None:
                    if row[5] != self._owner:
                        raise FlowAlreadyDecided.held_by(_holder(row[:9]))
                    con.execute(
                        "UPDATE flows SET state = 'executing' WHERE flow_id = %s", (flow_id,)
                    )
            cursor = con.execute(
                "INSERT INTO executions (key, claimed_us, info) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO NOTHING",
                (key, _now_us(), record),
            )
            won = cursor.rowcount == 1
        if won and flow_id is not None:
            self._claimed[key] = str(flow_id)
        return won

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None:
        record = _json(self.redact(dict(outcome)))
        flow_id = self._claimed.pop(key, None)
        state = "executed" if outcome.get("ok") else "executor_error"
        with self._store().transaction() as con:
            con.execute(
                "UPDATE executions SET outcome = %s, completed_us = %s WHERE key = %s",
                (record, _now_us(), key),
            )
            if flow_id is not None:
                con.execute(
                    "UPDATE flows SET state = %s WHERE flow_id = %s AND owner = %s",
                    (state, flow_id, self._owner),
                )

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        with self._store().connection() as con:
            row = con.execute("SELECT outcome FROM executions WHERE key = %s", (key,)).fetchone()
        return json.loads(row[0]) if row is not None and row[0] is not None else None

    def claimed(self, key: str) -> bool:
        with self._store().connection() as con:
            row = con.execute("SELECT 1 FROM executions WHERE key = %s", (key,)).fetchone()
        return row is not None

    # -- flows ---------------------------------------------------------------------

    def claim_flow(self, flow_id: str, state: str, *, by: str) -> FlowClaim:
        store = self._store()
        live = store.hold_liveness()
        with store.transaction() as con:
            row = self._hold_or_meet(con, flow_id, state, by, live)
            if row is None:
                return FlowClaim(won=True)
            holder = _holder(row[:9])
            if row[5] == self._owner:
                con.execute("UPDATE flows SET state = %s WHERE flow_id = %s", (state, flow_id))
                return FlowClaim(won=True)
            if row[2] is None and row[9] != MIGRATED and not store.is_alive(row[9]):
                con.execute("DELETE FROM flows WHERE flow_id = %s", (flow_id,))
                self._insert_flow(con, flow_id, state, by, live)
                return FlowClaim(won=True, holder=holder)
            return FlowClaim(won=False, holder=holder)

    def holder(self, flow_id: str) -> FlowHolder | None:
        with self._store().connection() as con:
            row = con.execute(f"{_FLOW} WHERE flow_id = %s", (flow_id,)).fetchone()
        return _holder(row[:9]) if row is not None else None

    def settle_flow(self, flow_id: str, final: str) -> None:
        with self._store().connection() as con:
            con.execute(
                "UPDATE flows SET final = %s, state = %s WHERE flow_id = %s AND owner = %s",
                (final, final, flow_id, self._owner),
            )

    def release_flow(self, flow_id: str) -> None:
        with self._store().connection() as con:
            con.execute(
                "DELETE FROM flows WHERE flow_id = %s AND owner = %s AND final IS NULL",
                (flow_id, self._owner),
            )

    def _hold_or_meet(self, con: Any, flow_id: str, state: str, by: str, live: str) -> Any:
        """Hold the flow (None), or the row of whoever holds it, locked ``FOR UPDATE``.

        The row met can vanish between the two statements: a takeover deleted and
        re-inserted it while this transaction waited on its lock, and ``FOR UPDATE``
        then finds nothing in this statement's snapshot. Trying again sees the new row
        (or inserts, if the taker released it)."""
        while True:
            if self._insert_flow(con, flow_id, state, by, live):
                return None
            row = con.execute(f"{_FLOW} WHERE flow_id = %s FOR UPDATE", (flow_id,)).fetchone()
            if row is not None:
                return row

    def _insert_flow(self, con: Any, flow_id: str, state: str, by: str, live: str) -> bool:
        """Hold the flow if nobody does; False when a row is there already."""
        by = str(self.redact(by))  # the reviewer's own text, shown to a race's loser
        cursor = con.execute(
            "INSERT INTO flows (flow_id, state, by, at_us, owner, host, pid, started, live) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, NULL, %s) ON CONFLICT (flow_id) DO NOTHING",
            (flow_id, state, by, _now_us(), self._owner, self._host, os.getpid(), live),
        )
        return cursor.rowcount == 1
