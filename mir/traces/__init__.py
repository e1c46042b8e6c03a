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
from mir.traces.queries import (
    chosen_sources,
    compact_traces,
    export_flows,
    flow_events,
    list_traces,
    listed_json,
    project_store,
)
from mir.traces.redaction import REDACTED, Redactor, secret_env_values
from mir.traces.sources import FlowFilter, production_finals
from mir.traces.store import TraceStore
from mir.traces.wording import (
    EVENT_COLUMNS,
    FLOW_COLUMNS,
    compaction_line,
    event_cells,
    event_details,
    flow_cells,
    flow_review_lines,
)

__all__ = [
    "EVENT_COLUMNS",
    "FLOW_COLUMNS",
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
    "chosen_sources",
    "compact_traces",
    "compaction_line",
    "event_cells",
    "event_details",
    "export_flows",
    "export_traces",
    "find_flow",
    "flow_cells",
    "flow_events",
    "flow_review_lines",
    "list_traces",
    "listed_json",
    "parse_since",
    "production_finals",
    "project_store",
    "resolve_agent",
    "secret_env_values",
    "verify_traces",
]
