"""Where the inbox reads the flows that wait: the review queue (``mir.reviews``), and
the project's redaction rules, applied once more to everything a page shows.

Trace events are redacted before they are stored, so a pending flow's input, context
and proposal hold no secret the traces know of; the page redacts them again with the
same rules (``[tool.mir.traces] redact_env`` / ``redact_patterns`` and the secret
shapes), so a value that reached the queue by another path is not shown either.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mir.project import load_project_at
from mir.traces import Redactor, TraceSettings, secret_env_values


class Pending(Protocol):
    """One waiting flow, as the queue describes it (``mir.reviews.PendingFlow``)."""

    flow_id: str
    agent: str
    action: str | None
    fields: Any
    reasons: Sequence[str]
    confidence: float | None
    created_at: Any
    age_s: float | None
    ttl_s: float | None
    expires_at: Any
    waits_for: str
    input: Any
    context: Any
    decision: Any
    requested_by: str | None


class Queue(Protocol):
    """The pages the inbox lists, and one flow by id (None when it no longer waits)."""

    def page(self, *, offset: int, limit: int) -> tuple[Sequence[Pending], int]: ...

    def find(self, flow_id: str) -> Pending | None: ...


@dataclass(frozen=True)
class ReviewQueue:
    """The project's review queue: reading it also closes the flows past their TTL."""

    project_root: Path

    def page(self, *, offset: int, limit: int) -> tuple[Sequence[Pending], int]:
        from mir.reviews import pending_page

        found = pending_page(self.project_root, offset=offset, limit=limit)
        return found.items, found.total

    def find(self, flow_id: str) -> Pending | None:
        from mir.reviews import pending_page

        found = pending_page(self.project_root, flow_id=flow_id, limit=1)
        return found.items[0] if found.items else None


def project_redactor(project_root: Path, environ: dict[str, str] | None = None) -> Redactor:
    """The redactor the project's trace store uses (same settings, same environment)."""
    settings = load_project_at(project_root).section("traces", TraceSettings)
    env = os.environ if environ is None else environ
    return Redactor(secret_env_values(env, settings.redact_env), patterns=settings.redact_patterns)
