"""Live observers of the trace: what is told of every event once it is durable.

A process may watch its own trace as it is written: the live OTLP export and the
Prometheus counters do. ``TraceStore.append`` tells every observer of the events it
just wrote (redacted, as stored), after the write: as ``TraceEvent``s, or, for an
observer that ships them elsewhere, as the stored JSON lines (no second
serialization). An observer never fails or slows a decision beyond its own call: an
exception it raises is counted (``failures()``) and dropped, and an observer that must
do I/O queues what it is told and returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mir.traces.domain import TraceEvent

Observer = Callable[[Sequence[TraceEvent]], None]

_lock = threading.Lock()
# (observer, the store folder it watches or None for every store, wants lines)
_observers: tuple[tuple[Callable[[Any], None], Path | None, bool], ...] = ()
_failures = 0


def watch(
    observer: Observer | Callable[[Sequence[str]], None],
    folder: Path | None = None,
    *,
    lines: bool = False,
) -> Callable[[], None]:
    """Tell ``observer`` of every event this process writes from now on (only those
    written to the trace store at ``folder``, when given; the stored JSON lines instead
    of events with ``lines``); returns the call that stops it (safe to call twice)."""
    global _observers
    entry = (observer, None if folder is None else Path(folder).resolve(), lines)
    with _lock:
        _observers = (*_observers, entry)

    def unwatch() -> None:
        global _observers
        with _lock:
            _observers = tuple(o for o in _observers if o is not entry)

    return unwatch


def watching() -> bool:
    return bool(_observers)


def notify(events: Sequence[TraceEvent], folder: Path | None = None) -> None:
    """Every event observer of ``folder``'s store, in the order they started watching."""
    _tell(lambda: events, (), folder)


def notify_stored(
    events: Sequence[TraceEvent], written: Sequence[tuple[str, bool]], folder: Path
) -> None:
    """Every observer of the store at ``folder``, with the events as written: one whose
    line was redacted is read back from that line (``written``: each event's stored
    body, and whether it was redacted)."""

    def stored() -> list[TraceEvent]:
        return [
            TraceEvent.model_validate_json(body) if redacted else event
            for event, (body, redacted) in zip(events, written, strict=True)
        ]

    _tell(stored, [body for body, _ in written], folder)


def _tell(events: Callable[[], Sequence[TraceEvent]], bodies: Sequence[str], folder: Any) -> None:
    global _failures
    built: Sequence[TraceEvent] | None = None
    for observer, only, lines in _observers:
        if only is not None and only != folder:
            continue
        try:
            if lines:
                observer(bodies)
            else:
                built = events() if built is None else built
                observer(built)
        except Exception:  # an observer is never part of the decision; none stops another
            with _lock:
                _failures += 1


def failures() -> int:
    """How many observer calls raised in this process (each one dropped)."""
    return _failures
