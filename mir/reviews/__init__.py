"""The review queue: flows waiting for a human, expiry past their TTL, reminders, and
what reviewers teach (exports to the eval suite and to fine-tuning data)."""

from mir.reviews.domain import PendingFlow, PendingPage, compact, key_fields
from mir.reviews.export import SuiteExport
from mir.reviews.queue import pending_page
from mir.reviews.reviewed import ReviewedFlow
from mir.reviews.teaching import ExportReport, export_reviews

__all__ = [
    "ExportReport",
    "PendingFlow",
    "PendingPage",
    "ReviewedFlow",
    "SuiteExport",
    "compact",
    "export_reviews",
    "key_fields",
    "pending_page",
]
