"""Batch decisions: every row of a JSONL file decided once, resumable (public interface)."""

from mir.batch.entrypoints import default_out, run_batch
from mir.batch.outcomes import (
    BatchProgress,
    BatchReport,
    LineProgress,
    RowOutcome,
    summary_lines,
)

__all__ = [
    "BatchProgress",
    "BatchReport",
    "LineProgress",
    "RowOutcome",
    "default_out",
    "run_batch",
    "summary_lines",
]
