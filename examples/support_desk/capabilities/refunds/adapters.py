"""refunds: the JSON order book and ledger, and the triage agent's executors.

All I/O lives here. The shop's data is ``data/store.json`` (read-only); what support did
is appended to ``.mir/support_ledger.json`` (git-ignored local state). Both paths can be
moved with ``SUPPORT_DESK_STORE`` / ``SUPPORT_DESK_LEDGER`` (the tests do).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .application import current_order, note_outcome, pay_refund, ticket_context
from .domain import Customer, Order, refund_allowance

PROJECT = Path(__file__).resolve().parents[2]


def store_path() -> Path:
    return Path(os.environ.get("SUPPORT_DESK_STORE", PROJECT / "data" / "store.json"))


def ledger_path() -> Path:
    return Path(os.environ.get("SUPPORT_DESK_LEDGER", PROJECT / ".mir" / "support_ledger.json"))


class JsonOrderBook:
    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        self._orders = {k: Order(id=k, **v) for k, v in data["orders"].items()}
        self._customers = {k: Customer(id=k, **v) for k, v in data["customers"].items()}

    def order(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)

    def customer(self, customer_id: str) -> Customer | None:
        return self._customers.get(customer_id)


class JsonLedger:
    """One JSON object keyed by idempotency key; rewritten atomically on each entry."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def entries(self) -> dict[str, dict[str, Any]]:
        if not self.path.is_file():
            return {}
        return json.loads(self.path.read_text(encoding="utf-8"))

    def entry(self, key: str) -> dict[str, Any] | None:
        return self.entries().get(key)

    def record(self, key: str, entry: Mapping[str, Any]) -> dict[str, Any]:
        entries = self.entries()
        if key in entries:  # a replay: the first write stands
            return entries[key]
        entries[key] = {**entry, "key": key}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(scratch, self.path)
        return entries[key]

    def refunded(self, order_id: str) -> float:
        return round(
            sum(
                e["amount"]
                for e in self.entries().values()
                if e["kind"] == "refund" and e["order_id"] == order_id
            ),
            2,
        )


def load_ticket_context(ticket: Mapping[str, Any]) -> dict[str, Any]:
    """The contract's context_loader: order and customer state for a ticket, and the
    refund the policy allows for it (what the contract binds a refund's amount to)."""
    book, ledger = JsonOrderBook(store_path()), JsonLedger(ledger_path())
    context = ticket_context(book, ledger, ticket)
    order = current_order(book, ledger, str(ticket.get("order_id", "")))
    context["refund_allowance"] = refund_allowance(
        order, str(ticket.get("customer_id", "")), str(ticket.get("category", ""))
    )
    return context


def issue_refund(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `refund`: pays (records) the refund if the policy allows it."""
    book, ledger = JsonOrderBook(store_path()), JsonLedger(ledger_path())
    return pay_refund(book, ledger, params, idempotency_key)


def record_rejection(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `reject`: records the rejection (the customer is told by email)."""
    return note_outcome(JsonLedger(ledger_path()), "reject", params, idempotency_key)


def open_escalation(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of `escalate`: queues the ticket for a support lead."""
    return note_outcome(JsonLedger(ledger_path()), "escalate", params, idempotency_key)
