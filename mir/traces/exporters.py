"""Exports: JSON lines, Parquet, and OTLP/JSON spans (OpenTelemetry GenAI conventions).

OTLP mapping: one trace per flow (trace id derived from the flow id, so exporting twice
gives the same ids and a backend dedupes), one root ``invoke_agent`` span covering the
flow, one child span per event. Model-call steps carry ``gen_ai.operation.name=chat``,
``gen_ai.provider.name``, ``gen_ai.request.model`` and ``gen_ai.usage.*_tokens``; mir's
own fields go under ``mir.*``. The file is the OTLP/HTTP JSON body
(``ExportTraceServiceRequest``): post it to a collector, or load it in a backend.

Every format is redacted again on the way out, with the redactor the project has now:
events are redacted when written, but a line written by an older mir, before a variable
was set, or before a ``redact_patterns`` entry was added, must not leave the machine
with what today's rules would scrub.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TextIO

from mir import __version__
from mir.errors import UsageError
from mir.traces.domain import TraceEvent
from mir.traces.records import EVENT_FIELDS, canonical_body, stored_body
from mir.traces.redaction import Redactor
from mir.traces.sources import FlowFilter
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
    spans = [span for flow in flows.values() for span in _flow_spans(flow)]
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


def _flow_spans(events: list[TraceEvent]) -> list[dict[str, Any]]:
    events = sorted(events, key=lambda e: e.seq)
    first = events[0]
    trace_id = hashlib.sha256(first.flow_id.encode()).hexdigest()[:32]
    root_id = _span_id(first.flow_id, "root")
    start = min(_nanos(e.at) - int(e.latency_ms * 1e6) for e in events)
    status = next((e.status for e in reversed(events) if e.status), None)
    root = {
        "traceId": trace_id,
        "spanId": root_id,
        "name": f"invoke_agent {first.agent}",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(max(_nanos(e.at) for e in events)),
        "attributes": [
            _attr("gen_ai.operation.name", "invoke_agent"),
            _attr("gen_ai.agent.name", first.agent),
            _attr("mir.flow_id", first.flow_id),
            *([_attr("mir.status", status)] if status else []),
        ],
        "status": {"code": 2 if status == "aborted" else 1},
    }
    return [root, *(_event_span(e, trace_id, root_id) for e in events)]


def _event_span(event: TraceEvent, trace_id: str, parent: str) -> dict[str, Any]:
    end = _nanos(event.at)
    attributes = [
        _attr("mir.step", event.step),
        _attr("mir.seq", event.seq),
        _attr("mir.event_id", event.event_id),
        _attr("gen_ai.agent.name", event.agent),
    ]
    if event.step in _MODEL_STEPS:
        attributes.append(_attr("gen_ai.operation.name", "chat"))
    optional = {
        "gen_ai.provider.name": event.provider,
        "gen_ai.request.model": event.model,
        "mir.prompt_hash": event.prompt_hash,
        "mir.prompt_version": event.prompt_version,
        "mir.status": event.status,
    }
    attributes += [_attr(k, v) for k, v in optional.items() if v is not None]
    if event.prompt_tokens or event.completion_tokens:
        attributes.append(_attr("gen_ai.usage.input_tokens", event.prompt_tokens))
        attributes.append(_attr("gen_ai.usage.output_tokens", event.completion_tokens))
    if event.cost_usd:
        attributes.append(_attr("mir.cost_usd", event.cost_usd))
    if event.reasons:
        attributes.append(_attr("mir.reasons", list(event.reasons)))
    if event.data:
        attributes.append(_attr("mir.data", json.dumps(event.data, default=str)))
    name = f"chat {event.model}" if event.step in _MODEL_STEPS and event.model else event.step
    return {
        "traceId": trace_id,
        "spanId": _span_id(event.flow_id, event.event_id),
        "parentSpanId": parent,
        "name": name,
        "kind": 3 if event.step in _MODEL_STEPS else 1,
        "startTimeUnixNano": str(end - int(event.latency_ms * 1e6)),
        "endTimeUnixNano": str(end),
        "attributes": attributes,
    }


def _span_id(flow_id: str, key: str) -> str:
    return hashlib.sha256(f"{flow_id}/{key}".encode()).hexdigest()[:16]


def _nanos(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1_000


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
