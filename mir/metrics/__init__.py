"""Prometheus metrics of mir's decisions (public interface): counted from the trace as
it is written (``start_counting``), the stores' gauges read at each scrape, served at
``/metrics`` (``metrics_app`` to mount in an app, ``--metrics HOST:PORT`` on ``mir
worker``, ``mir drift watch``; ``mir review serve --metrics`` mounts it).

No module here imports prometheus_client when it is imported: only counting, a scrape
or a server does.
"""

from mir.metrics.counting import Counting, start_counting
from mir.metrics.domain import COUNTED, Metric, Reading, parse_address, readings
from mir.metrics.gauges import StoreGauges
from mir.metrics.serving import (
    MetricsApp,
    MetricsServer,
    across_processes,
    bind_metrics,
    exposed,
    metrics_app,
    scrape_registry,
)

__all__ = [
    "COUNTED",
    "Counting",
    "Metric",
    "MetricsApp",
    "MetricsServer",
    "Reading",
    "StoreGauges",
    "across_processes",
    "bind_metrics",
    "exposed",
    "metrics_app",
    "parse_address",
    "readings",
    "scrape_registry",
    "start_counting",
]
