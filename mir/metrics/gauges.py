"""What is read from the stores at each scrape, never counted: the fleet queue's depth,
the flows waiting for review (how many, the oldest one's age) and which agents are
suspended.

A store that cannot be read leaves its gauges out of that scrape (and says so once on
stderr, until it is read again): a scrape never fails, and never shows a stale number.
The review read closes no flow and sends no reminder (``expire_at_most=0``,
``remind=False``): scraping changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mir.metrics.domain import (
    AGENT_SUSPENDED,
    OLDEST_REVIEW_AGE,
    QUEUE_DEPTH,
    REVIEWS_PENDING,
    word,
)

# procrastinate's jobs waiting to be decided, per queue (one queue per agent: "mir.<agent>")
_WAITING = (
    "SELECT queue_name, count(*) FROM procrastinate_jobs WHERE status = 'todo' GROUP BY queue_name"
)


class StoreGauges:
    """A prometheus_client collector over the project at ``root`` (found from the current
    folder when None)."""

    def __init__(self, root: str | Path | None = None):
        self.root = root
        self._failing: set[str] = set()

    def collect(self) -> Iterator[Any]:
        from mir.project import find_project

        try:
            project = find_project(Path(self.root) if self.root is not None else None)
        except Exception as exc:
            self._failed("project", exc)
            return
        agents = self._read("agents", lambda: _suspended(project.root))
        if agents is not None:
            yield from agents[1]
        reviews = self._read("reviews", lambda: _reviews(project.root))
        if reviews is not None:
            yield from reviews
        known = agents[0] if agents is not None else []
        queue = self._read("queue", lambda: _queue(project, known))
        if queue is not None:
            yield from queue

    def _read(self, what: str, read: Callable[[], Any]) -> Any:
        try:
            value = read()
        except Exception as exc:
            self._failed(what, exc)
            return None
        self._failing.discard(what)
        return value

    def _failed(self, what: str, exc: BaseException) -> None:
        if what not in self._failing:
            self._failing.add(what)
            line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print(f"mir metrics: {what} gauges left out: {line}", file=sys.stderr, flush=True)


def _suspended(root: Path) -> tuple[list[str], list[Any]]:
    from prometheus_client.core import GaugeMetricFamily

    from mir.runtime import list_agents

    family = GaugeMetricFamily(
        AGENT_SUSPENDED, "1 while the agent is suspended (its rules decide), else 0.",
        labels=["agent"],
    )  # fmt: skip
    names = []
    for agent in list_agents(root):
        names.append(agent.name)
        family.add_metric([word(agent.name)], 1.0 if agent.suspended else 0.0)
    return names, [family]


def _reviews(root: Path) -> list[Any]:
    from prometheus_client.core import GaugeMetricFamily

    from mir.reviews import pending_page

    page = pending_page(root, limit=1, remind=False, expire_at_most=0)
    oldest = page.items[0].age_s if page.items else 0.0
    return [
        GaugeMetricFamily(REVIEWS_PENDING, "Flows waiting for a human review.", value=page.total),
        GaugeMetricFamily(
            OLDEST_REVIEW_AGE,
            "Age of the oldest flow waiting for review, in seconds (0 when none waits).",
            value=oldest,
        ),
    ]


def _queue(project: Any, agents: list[str]) -> list[Any]:
    from prometheus_client.core import GaugeMetricFamily

    from mir.runtime import queue_name, submissions_of

    queue = submissions_of(project)
    if queue is None:  # local mode: no fleet queue
        return []
    with queue.store.connection() as con:
        rows = con.execute(_WAITING).fetchall()
    waiting = dict.fromkeys((queue_name(a) for a in agents), 0)
    waiting.update({name: int(count) for name, count in rows})
    family = GaugeMetricFamily(
        QUEUE_DEPTH, "Submitted decisions waiting in the fleet's queue for a worker.",
        labels=["agent"],
    )  # fmt: skip
    for name, count in sorted(waiting.items()):
        family.add_metric([word(name.removeprefix("mir."))], count)
    return [family]
