"""Traces: every decision's events, stored append-only and queryable (public interface)."""

from mir.traces.application import find_flow, parse_since, resolve_agent, verify_traces
from mir.traces.domain import (
    ChainBreak,
    CompactionResult,
    FlowStatus,
    FlowSummary,
    IntegrityReport,
    Step,
    TamperedTraceError,
    TraceEvent,
    TraceSettings,
    TraceStoreError,
)
from mir.traces.exporters import export_traces
from mir.traces.redaction import REDACTED, Redactor, secret_env_values
from mir.traces.store import EventsSql, TraceStore

__all__ = [
    "REDACTED",
    "ChainBreak",
    "CompactionResult",
    "EventsSql",
    "FlowStatus",
    "FlowSummary",
    "IntegrityReport",
    "Redactor",
    "Step",
    "TamperedTraceError",
    "TraceEvent",
    "TraceSettings",
    "TraceStore",
    "TraceStoreError",
    "export_traces",
    "find_flow",
    "parse_since",
    "resolve_agent",
    "secret_env_values",
    "verify_traces",
]
