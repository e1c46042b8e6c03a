"""The review queue: flows waiting for a human, expiry past their TTL, reminders, and
what reviewers teach (exports to the eval suite and to fine-tuning data)."""

from typing import TYPE_CHECKING, Any

from mir.reviews.domain import PendingFlow, PendingPage, compact, key_fields
from mir.reviews.queue import pending_page
from mir.reviews.sweep import EXPIRE_BATCH, expire_all
from mir.reviews.wording import (
    QUEUE_COLUMNS,
    age,
    export_json,
    export_lines,
    more_line,
    page_lines,
    queue_row,
)

if TYPE_CHECKING:
    from mir.reviews.export import SuiteExport
    from mir.reviews.reviewed import ReviewedFlow
    from mir.reviews.teaching import ExportReport, export_reviews

# The exports pull in the eval suite format and YAML writing: loaded on first use, so
# `mir review list` (read on every inbox page too) does not pay for them.
_LATER = {
    "ExportReport": "teaching",
    "export_reviews": "teaching",
    "ReviewedFlow": "reviewed",
    "SuiteExport": "export",
}


def __getattr__(name: str) -> Any:
    if name in _LATER:
        from importlib import import_module

        return getattr(import_module(f"mir.reviews.{_LATER[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EXPIRE_BATCH",
    "QUEUE_COLUMNS",
    "ExportReport",
    "PendingFlow",
    "PendingPage",
    "ReviewedFlow",
    "SuiteExport",
    "age",
    "compact",
    "expire_all",
    "export_json",
    "export_lines",
    "export_reviews",
    "key_fields",
    "more_line",
    "page_lines",
    "pending_page",
    "queue_row",
]
