"""What a shadow flow decides and writes through: its routes (a registry route resolves
to its shadow version) and its trace sink, which can end the flow ``close()`` gives up
on (its final event, ``aborted`` / ``shed``) and then stores nothing more of it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mir.contracts import Route
from mir.models import Resolved, RouteResolver
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.traces import TraceEvent

SHADOW = "shadow"


class ShadowRoutes:
    """The resolver of a shadow flow: a registry route resolves to its shadow version;
    any other route (a remote fallback, a pinned version) resolves as in production."""

    def __init__(self, live: RouteResolver):
        self.live = live

    def resolve(self, route: Route, flow_id: str) -> Resolved:
        return self.live.shadow(route) or self.live.resolve(route, flow_id)


class ShadowSink:
    """The shadow flows' trace sink: it knows the flow being written, so ``cut()`` can
    end it (its final event) and store nothing more from it."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._lock = threading.Lock()
        self._open: TraceEvent | None = None  # the last stored event of an unfinished flow
        self._cut = False

    def append(self, events: Sequence[TraceEvent]) -> None:
        with self._lock:
            if self._cut:
                return
            self.inner.append(events)
            last = events[-1] if events else None
            if last is not None:
                self._open = None if last.step == "final" else last

    def flow(self, flow_id: str, *, verify: bool = False) -> list[TraceEvent]:
        return self.inner.flow(flow_id, verify=verify)

    def __getattr__(self, name: str) -> Any:  # redact, and whatever else a sink offers
        return getattr(self.inner, name)

    def cut(self, agent: str, at: datetime) -> None:
        with self._lock:
            self._cut = True
            last, self._open = self._open, None
            if last is None:
                return
            record = DecisionRecord(
                flow_id=last.flow_id,
                agent=agent,
                status="aborted",
                reasons=[ReasonCode.SHED],
                latency_ms=max(0.0, (at - last.at).total_seconds() * 1000),
            )
            self.inner.append(
                [
                    TraceEvent(
                        flow_id=last.flow_id,
                        seq=last.seq + 1,
                        step="final",
                        agent=last.agent,
                        at=at,
                        status="aborted",
                        reasons=(ReasonCode.SHED,),
                        data={
                            "record": record.model_dump(),
                            "source": SHADOW,
                            "why": "the process closed before the shadow decision finished",
                        },
                    )
                ]
            )
