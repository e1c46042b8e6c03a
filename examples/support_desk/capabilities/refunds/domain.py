"""refunds: tickets, orders, customers, the triage decision and the refund policy.

Standard library + pydantic only: the rules of the business live here, so they stay
testable without a database, a network or a model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Category = Literal["damaged", "not_delivered", "wrong_item", "changed_mind", "other"]
OrderStatus = Literal["shipped", "delivered", "cancelled"]

# The largest refund the triage agent may trigger (also a limit in agents/triage.yaml,
# where the integrity check enforces it before any executor runs).
MAX_AUTOMATIC_REFUND = 200.0
# What the shop refunds at all; a customer who changed their mind returns the item
# through the returns process instead, so nothing is refunded here.
REFUNDABLE_CATEGORIES: frozenset[str] = frozenset({"damaged", "not_delivered", "wrong_item"})


class Ticket(BaseModel):
    """A customer's refund request, as the support form submits it.

    Also the triage agent's input schema (``input.model`` in agents/triage.yaml): a
    ticket that does not fit is refused before the model or the context loader sees it.
    """

    model_config = ConfigDict(frozen=True)

    ticket_id: str = Field(min_length=1, max_length=32)
    customer_id: str = Field(min_length=1, max_length=32)
    order_id: str = Field(pattern=r"^A-[0-9]{4}$")
    category: Category
    requested_amount: float = Field(ge=0)
    message: str = Field(max_length=500)


class Customer(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    tier: Literal["standard", "gold"] = "standard"
    refunds_last_90d: int = Field(0, ge=0)


class Order(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    customer_id: str
    total: float = Field(ge=0)
    status: OrderStatus
    refunded: float = Field(0.0, ge=0)

    @property
    def refundable(self) -> float:
        return round(max(self.total - self.refunded, 0.0), 2)


class TriageDecision(BaseModel):
    """What the triage agent proposes; mir validates it before any executor runs.

    Field order is the order the model writes them in (constrained decoding follows
    the schema): the category first, so the action is decided after the model has
    restated what the ticket is about. Strings are short and bounded: a rambling model
    fails validation instead of flooding an executor, and the decoding grammar stays
    small (llama.cpp unrolls ``max_length`` into nested rules). llama.cpp's grammar
    closes a string AT its bound, mid-word if need be, so ``reason`` is bounded well
    past the one short sentence the prompt shows (agents/triage.j2) for the model to
    end on its own.
    """

    category: Category
    action: Literal["refund", "reject", "escalate"]
    order_id: str = Field(pattern=r"^A-[0-9]{4}$")
    amount: float = Field(ge=0)
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(max_length=160, description="One short sentence: why this action.")


def refund_allowance(order: Order | None, customer_id: str, category: str) -> float:
    """The most this ticket may be refunded, decided by the policy alone (never by what
    the ticket's text says): nothing for an unknown, cancelled or someone else's order,
    nothing for a category the shop does not refund, else what is left on the order.

    The context loader puts it in the world state and the contract binds the refund
    amount to it, so a refund the policy does not allow fails the integrity check
    whatever the model was talked into.
    """
    if order is None or order.status == "cancelled" or order.customer_id != customer_id:
        return 0.0
    if category not in REFUNDABLE_CATEGORIES:
        return 0.0
    return order.refundable


class RefundRefused(Exception):
    """The refund breaks the policy; nothing was paid."""


def check_refund(order: Order | None, amount: float) -> None:
    """The policy every refund passes right before money moves, whoever proposed it.

    The contract caps a single refund (``MAX_AUTOMATIC_REFUND``); this adds what the
    contract cannot see: the order must exist, not be cancelled, and still have that
    much left to refund.
    """
    if order is None:
        raise RefundRefused("unknown order")
    if order.status == "cancelled":
        raise RefundRefused(f"order {order.id} is cancelled")
    if amount <= 0:
        raise RefundRefused("a refund must be positive")
    if amount > order.refundable:
        raise RefundRefused(
            f"{amount:.2f} exceeds what is left to refund on {order.id} ({order.refundable:.2f})"
        )
