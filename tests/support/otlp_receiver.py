"""A plain OTLP/HTTP receiver on 127.0.0.1: decodes each protobuf
``ExportTraceServiceRequest`` posted to ``/v1/traces`` and keeps its spans (ids as hex,
attributes as Python values). ``status`` and ``delay_s`` make it a failing or a slow
endpoint."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    url: str
    spans: list[dict[str, Any]] = field(default_factory=list)
    posts: int = 0
    status: int = 200
    delay_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.05)
        with self.lock:
            return list(self.spans)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def decode(body: bytes) -> list[dict[str, Any]]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest.FromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_id": span.parent_span_id.hex() or None,
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "status": span.status.code,
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                    }
                )
    return spans


@contextmanager
def otlp_receiver(*, status: int = 200, delay_s: float = 0.0) -> Iterator[Received]:
    received: Received

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(received.delay_s)
            with received.lock:
                received.posts += 1
                code = received.status
                if code == 200 and self.path == "/v1/traces":
                    received.spans.extend(decode(body))
            self.send_response(code)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received = Received(
        f"http://127.0.0.1:{server.server_address[1]}", status=status, delay_s=delay_s
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()


def refused_url() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
