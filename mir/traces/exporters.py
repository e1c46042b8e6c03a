"""Exports: JSON lines, Parquet, and OTLP/JSON spans (OpenTelemetry GenAI conventions).

OTLP: the spans of ``spans.py`` (the same ids as the live export), written as the
OTLP/HTTP JSON body (``ExportTraceServiceRequest``): post it to a collector, or load it
in a backend.

Every format is redacted again on the way out, with the redactor the project has now:
events are redacted when written, but a line written by an older mir, before a variable
was set, or before a ``redact_patterns`` entry was added, must not leave the machine
with what today's rules would scrub.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TextIO

from mir import __version__
from mir.errors import UsageError
from mir.traces.domain import TraceEvent
from mir.traces.records import EVENT_FIELDS, canonical_body, stored_body
from mir.traces.redaction import Redactor
from mir.traces.sources import FlowFilter
from mir.traces.spans import Span, flow_spans
from mir.traces.store import TraceStore

ExportFormat = Literal["json", "parquet", "otlp"]
_MODEL_STEPS = {"infer"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def export_traces(
    store: TraceStore, fmt: ExportFormat, output: Path | None, flows: FlowFilter | None = None
) -> int:
    """Write every event (of the ``flows`` kept: whole flows) in ``fmt`` to ``output``
    (stdout for text formats); returns the count."""
    redactor: Redactor = store._redactor  # the store's own rules (env, patterns, shapes)
    if fmt == "parquet":
        if output is None:
            raise UsageError("parquet is binary: it needs a file", hint="pass --output FILE")
        if not any(_needs_redaction(event, redactor) for event in store.events(flows)):
            return store.export_parquet(output, flows)  # DuckDB writes it directly
        return _write_parquet(_redacted(store.events(flows), redactor), output)
    events = _redacted(store.events(flows), redactor)
    if output is None:
        return _write(events, fmt, sys.stdout)
    with output.open("w", encoding="utf-8") as handle:
        return _write(events, fmt, handle)


def _needs_redaction(event: TraceEvent, redactor: Redactor) -> bool:
    body = canonical_body(event)
    return redactor.might_contain(body) and stored_body(event, redactor) != body


def _redacted(events: Iterable[TraceEvent], redactor: Redactor) -> Iterable[TraceEvent]:
    for event in events:
        body = canonical_body(event)
        if redactor.might_contain(body):
            cleaned = stored_body(event, redactor)
            if cleaned != body:
                event = TraceEvent.model_validate_json(cleaned)
        yield event


def _write_parquet(events: Iterable[TraceEvent], output: Path) -> int:
    """The slow path: redacted events as JSON lines, converted by DuckDB (same columns
    and order as ``TraceStore.export_parquet``)."""
    import tempfile

    import duckdb

    with tempfile.TemporaryDirectory() as scratch:
        lines = Path(scratch) / "events.jsonl"
        count = 0
        with lines.open("w", encoding="utf-8") as handle:
            for event in events:
                handle.write(canonical_body(event) + "\n")
                count += 1
        spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in EVENT_FIELDS.items()) + "}"
        columns = ", ".join(f'"{k}"' for k in EVENT_FIELDS)
        source = str(lines).replace("'", "''")
        target = str(output).replace("'", "''")
        con = duckdb.connect()
        try:
            con.execute(
                f"COPY (SELECT {columns} FROM read_json('{source}', "
                f"format='newline_delimited', columns={spec}) ORDER BY \"at\", flow_id, seq) "
                f"TO '{target}' (FORMAT parquet)"
            )
        finally:
            con.close()
    return count


def _write(events: Iterable[TraceEvent], fmt: ExportFormat, out: TextIO) -> int:
    if fmt == "json":
        count = 0
        for event in events:
            out.write(event.model_dump_json() + "\n")
            count += 1
        return count
    materialized = list(events)
    json.dump(otlp_request(materialized), out, separators=(",", ":"))
    out.write("\n")
    return len(materialized)


def otlp_request(events: list[TraceEvent]) -> dict[str, Any]:
    """The OTLP/JSON ``ExportTraceServiceRequest`` for these events."""
    flows: dict[str, list[TraceEvent]] = {}
    for event in events:
        flows.setdefault(event.flow_id, []).append(event)
    spans = [_otlp_span(span) for flow in flows.values() for span in flow_spans(flow)]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "mir")]},
                "scopeSpans": [
                    {"scope": {"name": "mir.traces", "version": __version__}, "spans": spans}
                ],
            }
        ]
    }


def _otlp_span(span: Span) -> dict[str, Any]:
    body: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": [_attr(k, v) for k, v in span.attributes.items()],
    }
    if span.parent_id:
        body["parentSpanId"] = span.parent_id
    if span.failed is not None:
        body["status"] = {"code": 2 if span.failed else 1}
    return body


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        wrapped: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    elif isinstance(value, list):
        wrapped = {"arrayValue": {"values": [{"stringValue": str(v)} for v in value]}}
    else:
        wrapped = {"stringValue": str(value)}
    return {"key": key, "value": wrapped}
