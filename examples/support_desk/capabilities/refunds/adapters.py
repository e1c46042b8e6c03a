"""refunds: the JSON order book, the SQLite ledger, and the triage agent's executors.

All I/O lives here. The shop's data is ``data/store.json`` (read-only); what support did
is appended to the SQLite file ``.mir/support_ledger.sqlite3`` (git-ignored local state).
Both paths can be moved with ``SUPPORT_DESK_STORE`` / ``SUPPORT_DESK_LEDGER`` (the tests
do).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .application import current_order, note_outcome, pay_refund, ticket_context
from .domain import Customer, Order, refund_allowance

PROJECT = Path(__file__).resolve().parents[2]


def store_path() -> Path:
    return Path(os.environ.get("SUPPORT_DESK_STORE", PROJECT / "data" / "store.json"))


def ledger_path() -> Path:
    return Path(os.environ.get("SUPPORT_DESK_LEDGER", PROJECT / ".mir" / "support_ledger.sqlite3"))


class JsonOrderBook:
    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        self._orders = {k: Order(id=k, **v) for k, v in data["orders"].items()}
        self._customers = {k: Customer(id=k, **v) for k, v in data["customers"].items()}

    def order(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)

    def customer(self, customer_id: str) -> Customer | None:
        return self._customers.get(customer_id)


class SqliteLedger:
    """What support did, in SQLite: one row per idempotency key, one transaction per write.

    Many processes record at once (workers, ``mir approve`` next to ``mir run``): the
    primary key makes a replay a no-op whoever wins, ``BEGIN IMMEDIATE`` serialises a
    refund's policy check with its write (two refunds of one order cannot both pass on
    the same balance), WAL lets readers run beside a writer, and ``busy_timeout`` makes a
    writer wait for the lock instead of failing. A write costs the same at any history
    size (an index per order, no file rewrite). Read it with
    ``sqlite3 .mir/support_ledger.sqlite3 "SELECT * FROM entries"``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = _connection(path)

    def entries(self) -> dict[str, dict[str, Any]]:
        rows = self._db.execute("SELECT key, entry FROM entries ORDER BY rowid")
        return {key: json.loads(entry) for key, entry in rows}

    def entry(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT entry FROM entries WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def record(
        self, key: str, entry: Mapping[str, Any], guard: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """Record ``entry`` under ``key`` unless the key is there already (a replay: the
        first write stands). ``guard`` runs inside the write lock, right before the
        insert: raising refuses the entry and writes nothing."""
        stored = {**entry, "key": key}
        self._db.execute("BEGIN IMMEDIATE")
        try:
            done = self.entry(key)
            if done is None:
                if guard is not None:
                    guard()
                self._db.execute(
                    "INSERT INTO entries (key, kind, order_id, amount, entry)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        key,
                        stored["kind"],
                        stored.get("order_id"),
                        float(stored.get("amount") or 0.0),
                        json.dumps(stored, sort_keys=True),
                    ),
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return stored if done is None else done

    def refunded(self, order_id: str) -> float:
        row = self._db.execute(
            "SELECT coalesce(sum(amount), 0) FROM entries WHERE order_id = ? AND kind = 'refund'",
            (order_id,),
        ).fetchone()
        return round(float(row[0]), 2)


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the table. Switching to WAL can answer "database is locked" at once,
    without waiting out busy_timeout, while another process opens the same new file (seen
    once in 200 racing first decisions: the context loader failed): so retry, briefly."""
    for attempt in range(100):
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # in WAL: durable at each checkpoint
            db.execute(
                "CREATE TABLE IF NOT EXISTS entries ("
                " key TEXT PRIMARY KEY, kind TEXT NOT NULL, order_id TEXT,"
                " amount REAL NOT NULL DEFAULT 0, entry TEXT NOT NULL,"
                " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
            )
            # refunded(): the refunds of one order, read from the index alone.
            db.execute(
                "CREATE INDEX IF NOT EXISTS entries_by_order ON entries (order_id, kind, amount)"
            )
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 99:
                raise
            time.sleep(0.05)


def _connection(path: Path) -> sqlite3.Connection:
    """This thread's connection to the ledger at ``path``, opened (and the table made)
    once: the executors and the context loader build a ledger per call, and opening
    SQLite each time would cost more than the write."""
    opened: dict[Path, sqlite3.Connection] | None = getattr(_connections, "by_path", None)
    if opened is None:
        opened = _connections.by_path = {}
    db = opened.get(path)
    if db is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE ... COMMIT).
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        db.execute("PRAGMA busy_timeout = 30000")
        _set_up(db)
        opened[path] = db
    return db


_connections = threading.local()


def load_ticket_context(ticket: Mapping[str, Any]) -> dict[str, Any]:
    """The contract's context_loader: order and customer state for a ticket, and the
    refund the policy allows for it (what the contract binds a refund's amount to)."""
    book, ledger = JsonOrderBook(store_path()), SqliteLedger(ledger_path())
    context = ticket_context(book, ledger, ticket)
    order = current_order(book, ledger, str(ticket.get("order_id", "")))
    context["refund_allowance"] = refund_allowance(
        order, str(ticket.get("customer_id", "")), str(ticket.get("category", ""))
    )
    return context


def issue_refund(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `refund`: pays (records) the refund if the policy allows it."""
    book, ledger = JsonOrderBook(store_path()), SqliteLedger(ledger_path())
    return pay_refund(book, ledger, params, idempotency_key)


def record_rejection(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `reject`: records the rejection (the customer is told by email)."""
    return note_outcome(SqliteLedger(ledger_path()), "reject", params, idempotency_key)


def open_escalation(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `escalate`: queues the ticket for a support lead."""
    return note_outcome(SqliteLedger(ledger_path()), "escalate", params, idempotency_key)
