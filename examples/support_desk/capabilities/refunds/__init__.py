"""refunds: the public interface; other capabilities import only these names."""

from .adapters import JsonLedger, JsonOrderBook, load_ticket_context
from .application import pay_refund, ticket_context
from .domain import RefundRefused, Ticket, TriageDecision, check_refund

__all__ = [
    "JsonLedger",
    "JsonOrderBook",
    "RefundRefused",
    "Ticket",
    "TriageDecision",
    "check_refund",
    "load_ticket_context",
    "pay_refund",
    "ticket_context",
]
