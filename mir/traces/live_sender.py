"""The live export's sender: a process of its own that turns trace lines into spans.

``live.py`` starts ``python -m mir.traces.live_sender`` once per writing process and
writes it every stored trace line on a pipe; this process builds the spans of
``spans.py`` (the same ids ``mir traces export --format otlp`` writes) and hands them to
OpenTelemetry's ``BatchSpanProcessor``, whose thread posts them with the OTLP/HTTP
exporter. Building and encoding spans costs about half a millisecond of CPU per
decision: in the deciding process, under its GIL, that would be the caller's time.

A flow's root span leaves when the flow is final or pending in the process that
opened it; a flow resumed in another process (``mir approve``) sends its later spans
under the same trace, read from the flow's first event in the store. At end of input
(the writer closed or exited) it sends what is left, waiting at most ``timeout_s``,
and prints one JSON line of counts: spans sent, and dropped (a failed post, or left).
"""

from __future__ import annotations

import collections
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mir import __version__
from mir.traces.domain import OtelSettings, TraceEvent
from mir.traces.spans import Span, event_span, flow_context, root_span, span_id

_QUIET = (  # an endpoint that is down is counted, not logged per batch
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.sdk._shared_internal",
)
_OPEN = ("pending_review",)  # a flow that leaves its process without a final status
_KEEP_FLOWS = 10_000  # flows whose first event this sender remembers


class Sender:
    def __init__(self, url: str, settings: OtelSettings, folder: Path) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        for name in _QUIET:
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self._folder = folder
        self._settings = settings
        self.counts = collections.Counter[str]()
        self._count_lock = threading.Lock()
        self._flows: collections.OrderedDict[str, tuple[TraceEvent, bool]] = (
            collections.OrderedDict()
        )
        exporter = _Counting(OTLPSpanExporter(endpoint=url, timeout=settings.timeout_s), self)
        self._processor = BatchSpanProcessor(
            exporter,
            max_queue_size=settings.max_queue,
            max_export_batch_size=min(512, settings.max_queue),
            schedule_delay_millis=200,
        )
        self._spans = _SdkSpans(settings.service_name)

    def send(self, event: TraceEvent) -> None:
        for span in self._spans_of(event):
            self._processor.on_end(self._spans.readable(span))
            self.counted("queued", 1)

    def counted(self, name: str, n: int) -> None:
        with self._count_lock:
            self.counts[name] += n

    def _spans_of(self, event: TraceEvent) -> list[Span]:
        flow = self._flows.get(event.flow_id)
        if flow is None:
            first = event if event.seq == 0 else self._first_event(event.flow_id)
            flow = (first or event, event.seq == 0)
            self._flows[event.flow_id] = flow
            while len(self._flows) > _KEEP_FLOWS:
                self._flows.popitem(last=False)
        first, opened_here = flow
        trace_id, caller = flow_context(first)
        spans = [event_span(event, trace_id, span_id(event.flow_id, "root"))]
        if opened_here and event.status is not None:
            spans.append(root_span([first, event], trace_id, caller))
            self._flows[event.flow_id] = (first, False)  # one root span per flow
        if event.status is not None and event.status not in _OPEN:
            self._flows.pop(event.flow_id, None)
        return spans

    def _first_event(self, flow_id: str) -> TraceEvent | None:
        from mir.traces.store import TraceStore

        try:
            with TraceStore(self._folder) as store:
                events = store.flow(flow_id)
        except Exception:  # a store it cannot read: the flow's own trace id, then
            return None
        return events[0] if events and events[0].seq == 0 else None

    def finish(self) -> dict[str, int]:
        """Send what is left (waiting at most ``timeout_s``); the final counts."""
        closer = threading.Thread(target=self._processor.shutdown, daemon=True)
        closer.start()
        closer.join(self._settings.timeout_s + 0.5)
        with self._count_lock:
            counts = dict(self.counts)
        sent = counts.get("sent", 0)
        return {"sent": sent, "dropped": counts.get("queued", 0) - sent + counts.get("bad", 0)}


class _Counting:
    """The OTLP exporter, counting what each post delivered."""

    def __init__(self, inner: Any, sender: Sender) -> None:
        self._inner = inner
        self._sender = sender

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self._inner.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        if result == SpanExportResult.SUCCESS:
            self._sender.counted("sent", len(spans))
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))


class _SdkSpans:
    """``spans.Span`` as the SDK's ``ReadableSpan`` (what its exporters take)."""

    def __init__(self, service_name: str) -> None:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        self._trace = trace
        self._resource = Resource.create({"service.name": service_name})
        self._scope = InstrumentationScope("mir.traces", __version__)

    def readable(self, span: Span) -> Any:
        from opentelemetry.sdk.trace import ReadableSpan

        api = self._trace
        flags = api.TraceFlags(api.TraceFlags.SAMPLED)
        trace_id = int(span.trace_id, 16)
        parent = (
            api.SpanContext(trace_id, int(span.parent_id, 16), is_remote=True, trace_flags=flags)
            if span.parent_id
            else None
        )
        if span.failed is None:
            status = api.Status(api.StatusCode.UNSET)
        else:
            status = api.Status(api.StatusCode.ERROR if span.failed else api.StatusCode.OK)
        return ReadableSpan(
            name=span.name,
            context=api.SpanContext(trace_id, int(span.span_id, 16), False, trace_flags=flags),
            parent=parent,
            resource=self._resource,
            attributes=span.attributes,
            kind=api.SpanKind.CLIENT if span.kind == 3 else api.SpanKind.INTERNAL,
            status=status,
            start_time=span.start_ns,
            end_time=span.end_ns,
            instrumentation_scope=self._scope,
        )


def _lines(fd: int) -> Iterator[bytes]:
    """Each line as soon as it arrives (a buffered reader would wait to fill its buffer)."""
    rest = b""
    while chunk := os.read(fd, 1 << 16):
        *lines, rest = (rest + chunk).split(b"\n")
        yield from (line for line in lines if line)
    if rest:
        yield rest


def main(argv: Sequence[str]) -> int:
    """``python -m mir.traces.live_sender URL FOLDER SETTINGS_JSON``: lines on stdin."""
    url, folder, settings = argv[0], Path(argv[1]), OtelSettings.model_validate_json(argv[2])
    sender = Sender(url, settings, folder)
    for line in _lines(sys.stdin.fileno()):
        try:
            event = TraceEvent.model_validate_json(line)
        except ValueError:  # a line cut by a writer that died mid-write
            sender.counted("bad", 1)
            continue
        try:
            sender.send(event)
        except Exception:  # one odd event never stops the export
            sender.counted("bad", 1)
    print(json.dumps(sender.finish()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
