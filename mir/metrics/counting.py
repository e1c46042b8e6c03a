"""Counting in this process: prometheus_client's counters and histograms, fed by a
trace observer (``mir.traces.watch``) with every event this process writes.

The observer only adds to in-memory values (or, in multiprocess mode, to this process's
own mmap'd files): it does no I/O of its own and never raises into the decision (the
traces' observer hook drops and counts an exception).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from mir.metrics.domain import (
    ACTIONS_PER_AGENT,
    AGENTS,
    COUNTED,
    LATENCY_BUCKETS,
    FlowSources,
    readings,
)
from mir.traces import TraceEvent, watch


class Counting:
    """The counted metrics in ``registry`` (prometheus_client's default one when None),
    and the observer that feeds them: ``counting(events)``. ``agents`` and ``actions``
    cap the distinct agent words and each agent's action words (then ``other``)."""

    def __init__(
        self, registry: Any = None, *, agents: int = AGENTS, actions: int = ACTIONS_PER_AGENT
    ):
        from prometheus_client import REGISTRY, Counter, Histogram

        target = REGISTRY if registry is None else registry
        self._metrics: dict[str, Any] = {}
        self._counters: set[str] = set()
        for metric in COUNTED:
            if metric.kind == "counter":
                self._counters.add(metric.name)
                made: Any = Counter(metric.name, metric.help, metric.labels, registry=target)
            else:
                made = Histogram(
                    metric.name, metric.help, metric.labels, registry=target,
                    buckets=LATENCY_BUCKETS,
                )  # fmt: skip
            self._metrics[metric.name] = made
        self._sources = FlowSources(agents=agents, actions=actions)
        self._lock = threading.Lock()

    def __call__(self, events: Sequence[TraceEvent]) -> None:
        with self._lock:  # one writer's flows at a time: the source memory is shared
            found = readings(events, self._sources)
        for reading in found:
            child = self._metrics[reading.metric].labels(*reading.labels)
            if reading.metric in self._counters:
                child.inc(reading.value)
            else:
                child.observe(reading.value)


_lock = threading.Lock()
_process: Counting | None = None
_unwatch: Callable[[], None] | None = None


def start_counting() -> Callable[[], None]:
    """Count every trace event this process writes from now on, in prometheus_client's
    default registry (an app's own ``/metrics`` shows them too). Once per process: a
    second call while counting changes nothing. Returns the call that stops counting
    (the values counted so far stay)."""
    global _process, _unwatch
    with _lock:
        if _process is None:
            _process = Counting()
        if _unwatch is None:
            _unwatch = watch(_process)

    def stop() -> None:
        global _unwatch
        with _lock:
            if _unwatch is not None:
                _unwatch()
                _unwatch = None

    return stop
