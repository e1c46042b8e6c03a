"""The review queue: flows waiting for a human, expiry past their TTL, reminders, and
what reviewers teach (exports to the eval suite and to fine-tuning data)."""

from mir.reviews.domain import PendingFlow, PendingPage, compact, key_fields
from mir.reviews.queue import pending_page

__all__ = ["PendingFlow", "PendingPage", "compact", "key_fields", "pending_page"]
