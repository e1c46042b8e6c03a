"""Serving ``/metrics``: the registry a scrape reads (what this process or its worker
processes counted, and the gauges read from the stores at that moment), as an ASGI app
to mount (``metrics_app``) and as a small HTTP server of its own (``MetricsServer``,
behind ``--metrics HOST:PORT``).

``mir worker -j N`` counts in N processes: ``across_processes`` gives them one folder
(prometheus_client's multiprocess mode: each process writes its own files there, a
scrape sums them), set in ``$PROMETHEUS_MULTIPROC_DIR`` before prometheus_client is
first imported, and removed when the workers stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from mir.errors import ConfigError, UsageError
from mir.metrics.counting import start_counting
from mir.metrics.domain import parse_address
from mir.metrics.gauges import StoreGauges

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


class _Counted:
    """What was counted: this process's default registry, or every process's files."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client import REGISTRY

        folder = os.environ.get(MULTIPROC_ENV)
        if not folder:
            yield from REGISTRY.collect()
            return
        from prometheus_client import CollectorRegistry
        from prometheus_client.multiprocess import MultiProcessCollector

        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=folder)
        yield from merged.collect()


def scrape_registry(project: str | Path | None = None, *, stores: bool = True) -> Any:
    """The registry one scrape renders: the counted metrics, and (``stores``) the gauges
    read from the project's stores."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(_Counted())  # type: ignore[arg-type]
    if stores:
        registry.register(StoreGauges(project))  # type: ignore[arg-type]
    return registry


class MetricsApp:
    """An ASGI app answering every GET with the metrics (mount it at ``/metrics``)."""

    def __init__(self, registry: Any):
        self.registry = registry

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # served as the whole app
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        if scope.get("method", "GET") not in ("GET", "HEAD"):
            status, body, kind = 405, b"GET only\n", "text/plain; charset=utf-8"
        else:  # the gauges read stores: off the event loop
            status, kind = 200, CONTENT_TYPE_LATEST
            body = await asyncio.to_thread(generate_latest, self.registry)
        headers = [(b"content-type", kind.encode()), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if scope.get("method") == "HEAD":
            body = b""
        await send({"type": "http.response.body", "body": body})


def metrics_app(project: str | Path | None = None, *, stores: bool = True) -> MetricsApp:
    """``/metrics`` for an app to mount (``Mount("/metrics", metrics_app())``): what this
    process counts once ``start_counting()`` was called, and the project's gauges."""
    return MetricsApp(scrape_registry(project, stores=stores))


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class MetricsServer:
    """``/metrics`` on ``host:port`` in a thread of this process: bound when made (a port
    in use is a ``UsageError`` before anything starts), serving from ``start()``."""

    def __init__(self, host: str, port: int, registry: Any):
        from prometheus_client import make_wsgi_app

        server_class = type("MetricsHttp", (_Server,), {})
        try:
            family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
            server_class.address_family = family
            self._httpd = server_class((host, port), _Quiet)
        except OSError as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise UsageError(
                f"--metrics: cannot serve on {host}:{port} ({why})",
                hint="is the port in use? give another PORT or HOST:PORT",
            ) from exc
        self._httpd.set_app(make_wsgi_app(registry))
        self.host, self.port = host, self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/metrics"

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="mir-metrics", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()


def bind_metrics(address: str, project: str | Path | None = None) -> MetricsServer:
    """A server for ``--metrics ADDRESS`` (``PORT`` or ``HOST:PORT``), bound, not started."""
    host, port = parse_address(address)
    return MetricsServer(host, port, scrape_registry(project))


@contextlib.contextmanager
def exposed(address: str | None, project: str | Path | None = None) -> Iterator[None]:
    """While the block runs: this process counts and serves ``/metrics`` on ``address``
    (nothing when None); the line saying where goes to stderr."""
    if address is None:
        yield
        return
    server = bind_metrics(address, project)
    stop = start_counting()
    server.start()
    print(f"metrics: {server.url}", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        stop()
        server.close()


@contextlib.contextmanager
def across_processes() -> Iterator[Path]:
    """One folder the processes forked or spawned from here count into (multiprocess
    mode), set before prometheus_client is imported; removed afterwards."""
    if os.environ.get(MULTIPROC_ENV):  # the user's own: theirs to clean
        yield Path(os.environ[MULTIPROC_ENV])
        return
    if "prometheus_client" in sys.modules:
        raise ConfigError(
            "metrics of several worker processes need prometheus_client's multiprocess "
            "mode, and it was imported already in this process",
            hint=f"set ${MULTIPROC_ENV} to an empty folder before starting",
        )
    folder = Path(tempfile.mkdtemp(prefix="mir-metrics-"))
    os.environ[MULTIPROC_ENV] = str(folder)
    try:
        yield folder
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)
