"""refunds: use cases (the triage agent's executors and context), and their ports."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .domain import Customer, Order, check_refund


class OrderBook(Protocol):
    """Where customers and orders live: a JSON file here, the shop's database in real life."""

    def order(self, order_id: str) -> Order | None: ...

    def customer(self, customer_id: str) -> Customer | None: ...


class Ledger(Protocol):
    """Append-only record of what support did; idempotent on the key."""

    def entry(self, key: str) -> dict[str, Any] | None: ...

    def record(
        self, key: str, entry: Mapping[str, Any], guard: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """Store ``entry`` once per key (a replay returns the first). ``guard`` runs
        atomically with the write: no other write lands between its check and this one."""
        ...

    def refunded(self, order_id: str) -> float: ...


def current_order(book: OrderBook, ledger: Ledger, order_id: str) -> Order | None:
    """The order as it stands now: the shop's record plus the refunds already paid."""
    order = book.order(order_id)
    if order is None:
        return None
    return order.model_copy(update={"refunded": order.refunded + ledger.refunded(order_id)})


def ticket_context(book: OrderBook, ledger: Ledger, ticket: Mapping[str, Any]) -> dict[str, Any]:
    """The world state the triage agent may see for a ticket (and mir re-checks before
    executing: a refund paid in between changes it, and the decision goes STALE)."""
    order = current_order(book, ledger, str(ticket.get("order_id", "")))
    customer = book.customer(str(ticket.get("customer_id", "")))
    return {
        "order": None
        if order is None
        else {
            "id": order.id,
            "total": order.total,
            "refundable": order.refundable,
            "status": order.status,
            "belongs_to_customer": order.customer_id == ticket.get("customer_id"),
        },
        "customer": None
        if customer is None
        else {"tier": customer.tier, "refunds_last_90d": customer.refunds_last_90d},
    }


def pay_refund(
    book: OrderBook, ledger: Ledger, params: Mapping[str, Any], key: str
) -> dict[str, Any]:
    """Refund ``params['amount']`` on ``params['order_id']`` if the policy allows it.

    The policy runs inside the ledger's write (``guard``): two refunds of one order in
    two processes cannot both pass on the same balance. A replay of a paid refund
    returns the first entry without re-running the policy (it ran back then).
    """
    order_id, amount = str(params["order_id"]), float(params["amount"])

    def policy() -> None:
        check_refund(current_order(book, ledger, order_id), amount)

    entry = {**params, "kind": "refund", "order_id": order_id, "amount": amount}
    return ledger.record(key, entry, guard=policy)


def note_outcome(ledger: Ledger, kind: str, params: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Record a rejection or an escalation (no money moves)."""
    return ledger.record(key, {**params, "kind": kind, "amount": 0.0})
