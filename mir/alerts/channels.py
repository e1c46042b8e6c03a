"""Alerts: ``[tool.mir.alerts]`` ``command`` and/or ``webhook`` get a JSON payload.

Drift sends warnings and suspensions here, the runtime a flow that starts waiting for
review, the review queue its reminders: one set of channels for all of them.

An alert is best effort: a failing command or an unreachable webhook becomes a note in
the report, never an error that would stop the breaker from suspending the next agent
(or fail a decision).
``timeout_s`` is each alert's total deadline, not a per-read timeout: a webhook that
answers one byte every 2 s (each read inside the timeout) once held a check forever.
The breaker suspends every agent before it sends any alert.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class AlertSettings(BaseModel):
    """``[tool.mir.alerts]``: where drift warnings and suspensions, and flows waiting for
    review, are sent."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(
        None, description="Run with the JSON payload on stdin, e.g. 'notify-send-drift'."
    )
    webhook: str | None = Field(None, description="POSTed the JSON payload (http or https).")
    on: list[Literal["warn", "suspend", "review", "remind"]] = Field(
        default_factory=lambda: ["warn", "suspend", "review", "remind"],
        description="What alerts: drift verdicts (warn, suspend), a flow that starts "
        "waiting for review (review), one still waiting after the contract's "
        "review.remind_after (remind).",
    )
    timeout_s: float = Field(
        5.0,
        gt=0,
        description="Each alert's total deadline (command or webhook, connecting and "
        "reading included): past it the alert is a note and the check goes on.",
    )


def send(settings: AlertSettings, payload: dict[str, Any]) -> list[str]:
    """Deliver one payload to every configured target; returns problems as notes."""
    body = json.dumps(payload, default=str).encode()
    notes = []
    if settings.command:
        try:
            done = subprocess.run(
                shlex.split(settings.command),
                input=body,
                capture_output=True,
                timeout=settings.timeout_s,
                check=False,
            )
            if done.returncode:
                notes.append(f"alert command exited {done.returncode}: {settings.command}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            notes.append(f"alert command failed ({exc}): {settings.command}")
    if settings.webhook:
        notes += _post(settings.webhook, body, settings.timeout_s)
    return notes


def _post(url: str, body: bytes, deadline_s: float) -> list[str]:
    """POST ``body`` to ``url`` within ``deadline_s`` in all: the request runs in a daemon
    thread that is left behind past the deadline (a process exiting does not wait for it)."""
    import urllib.request  # http.client and email: only when a webhook is set

    request = urllib.request.Request(
        url,
        data=body,
        headers={"Content-Type": "application/json", "User-Agent": "mir-alerts"},
        method="POST",
    )
    problems: list[str] = []

    def deliver() -> None:
        try:
            with urllib.request.urlopen(request, timeout=deadline_s) as response:
                response.read()
        except (OSError, ValueError) as exc:
            problems.append(f"alert webhook failed ({exc}): {url}")

    thread = threading.Thread(target=deliver, name="mir-alert", daemon=True)
    thread.start()
    thread.join(deadline_s)
    if thread.is_alive():
        return [f"alert webhook failed (no full answer within {deadline_s:g} s): {url}"]
    return problems
