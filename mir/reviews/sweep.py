"""``mir review expire``: close every flow waiting past its TTL, batch after batch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mir.reviews.domain import PendingPage

EXPIRE_BATCH = 1_000  # flows closed per read of the queue


def expire_all(project: Path | None, *, agent: str | None = None) -> PendingPage:
    """Read the queue until no flow past its TTL is left (or a read closes none, e.g. a
    racing approval won them all); the last page, with every flow closed on the way."""
    from mir.reviews import queue  # looked up at call time: one read path for tests too

    page = queue.pending_page(project, limit=1, agent=agent, expire_at_most=EXPIRE_BATCH)
    expired = list(page.expired)
    while page.still_due and page.expired:
        page = queue.pending_page(
            project, limit=1, agent=agent, expire_at_most=EXPIRE_BATCH, remind=False
        )
        expired += page.expired
    return replace(page, expired=expired)
