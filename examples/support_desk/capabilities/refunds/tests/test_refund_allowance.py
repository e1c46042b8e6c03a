"""The refund the policy allows for a ticket: what the contract binds a refund to."""

import pytest

from ..domain import Order, refund_allowance

ORDER = Order(id="A-1003", customer_id="C-003", total=59.0, status="delivered", refunded=9.0)


@pytest.mark.parametrize("category", ["damaged", "not_delivered", "wrong_item"])
def test_a_refundable_category_allows_what_is_left_on_the_order(category: str) -> None:
    assert refund_allowance(ORDER, "C-003", category) == 50.0


@pytest.mark.parametrize(
    ("order", "customer", "category"),
    [
        (ORDER, "C-003", "changed_mind"),  # what the injection ticket really is
        (ORDER, "C-003", "other"),
        (ORDER, "C-004", "damaged"),  # someone else's order
        (ORDER.model_copy(update={"status": "cancelled"}), "C-003", "damaged"),
        (None, "C-003", "damaged"),
    ],
)
def test_everything_else_allows_nothing(order, customer: str, category: str) -> None:
    assert refund_allowance(order, customer, category) == 0.0
