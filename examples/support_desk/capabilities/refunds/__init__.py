"""refunds: the public interface; other capabilities import only these names."""

from .adapters import JsonOrderBook, SqliteLedger, load_ticket_context
from .application import pay_refund, ticket_context
from .domain import RefundRefused, Ticket, TriageDecision, check_refund

__all__ = [
    "JsonOrderBook",
    "RefundRefused",
    "SqliteLedger",
    "Ticket",
    "TriageDecision",
    "check_refund",
    "load_ticket_context",
    "pay_refund",
    "ticket_context",
]
