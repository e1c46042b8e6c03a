"""The refund policy and the use cases, with in-memory fakes for the ports."""

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from ..application import pay_refund, ticket_context
from ..domain import Customer, Order, RefundRefused, check_refund

ORDER = Order(id="A-0001", customer_id="C-1", total=50.0, status="delivered")


class FakeBook:
    def __init__(self, *orders: Order) -> None:
        self.orders = {o.id: o for o in orders}

    def order(self, order_id: str) -> Order | None:
        return self.orders.get(order_id)

    def customer(self, customer_id: str) -> Customer | None:
        return Customer(id=customer_id, name="Ada", tier="gold") if customer_id == "C-1" else None


class FakeLedger:
    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    def entry(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def record(
        self, key: str, entry: Mapping[str, Any], guard: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        if key not in self.entries and guard is not None:
            guard()
        return self.entries.setdefault(key, dict(entry))

    def refunded(self, order_id: str) -> float:
        return sum(
            e["amount"]
            for e in self.entries.values()
            if e["kind"] == "refund" and e["order_id"] == order_id
        )


@pytest.mark.parametrize("amount", [0.01, 20.0, 50.0])
def test_refunds_up_to_the_order_total_pass(amount: float) -> None:
    check_refund(ORDER, amount)


@pytest.mark.parametrize(
    ("order", "amount", "why"),
    [
        (None, 10.0, "unknown order"),
        (ORDER.model_copy(update={"status": "cancelled"}), 10.0, "cancelled"),
        (ORDER, 0.0, "positive"),
        (ORDER, 50.01, "exceeds"),
        (ORDER.model_copy(update={"refunded": 45.0}), 10.0, "exceeds"),
    ],
)
def test_refunds_outside_the_policy_are_refused(order: Order | None, amount: float, why: str):
    with pytest.raises(RefundRefused, match=why):
        check_refund(order, amount)


def test_paying_twice_with_the_same_key_pays_once() -> None:
    book, ledger = FakeBook(ORDER), FakeLedger()
    params = {"order_id": "A-0001", "amount": 30.0, "reason": "broken"}
    pay_refund(book, ledger, params, "key-1")
    pay_refund(book, ledger, params, "key-1")
    assert ledger.refunded("A-0001") == 30.0


def test_a_second_refund_cannot_exceed_what_is_left() -> None:
    book, ledger = FakeBook(ORDER), FakeLedger()
    pay_refund(book, ledger, {"order_id": "A-0001", "amount": 30.0}, "key-1")
    with pytest.raises(RefundRefused, match="exceeds"):
        pay_refund(book, ledger, {"order_id": "A-0001", "amount": 30.0}, "key-2")


def test_context_shows_what_is_left_and_changes_after_a_refund() -> None:
    book, ledger = FakeBook(ORDER), FakeLedger()
    ticket = {"order_id": "A-0001", "customer_id": "C-1"}
    before = ticket_context(book, ledger, ticket)
    assert before["order"]["refundable"] == 50.0
    assert before["order"]["belongs_to_customer"] is True
    assert before["customer"] == {"tier": "gold", "refunds_last_90d": 0}
    pay_refund(book, ledger, {"order_id": "A-0001", "amount": 20.0}, "key-1")
    assert ticket_context(book, ledger, ticket)["order"]["refundable"] == 30.0


def test_context_for_an_unknown_order_and_customer() -> None:
    context = ticket_context(FakeBook(), FakeLedger(), {"order_id": "A-9999", "customer_id": "X"})
    assert context == {"order": None, "customer": None}
