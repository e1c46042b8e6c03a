"""Traces: every decision's events, stored append-only and queryable (public interface)."""

from mir.traces.application import find_flow, parse_since, resolve_agent, verify_traces
from mir.traces.domain import (
    FLOW_SOURCES,
    UNFINISHED,
    ChainBreak,
    CompactionResult,
    EventsSql,
    FlowSource,
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
from mir.traces.sources import FlowFilter, production_finals
from mir.traces.store import TraceStore

__all__ = [
    "FLOW_SOURCES",
    "REDACTED",
    "UNFINISHED",
    "ChainBreak",
    "CompactionResult",
    "EventsSql",
    "FlowFilter",
    "FlowSource",
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
    "production_finals",
    "resolve_agent",
    "secret_env_values",
    "verify_traces",
]
