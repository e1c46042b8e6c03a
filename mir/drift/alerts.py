"""Alerts: ``[tool.mir.alerts]`` ``command`` and/or ``webhook`` get a JSON payload.

An alert is best effort: a failing command or an unreachable webhook becomes a note in
the report, never an error that would stop the breaker from suspending the next agent.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class AlertSettings(BaseModel):
    """``[tool.mir.alerts]``: where drift warnings and suspensions are sent."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(
        None, description="Run with the JSON payload on stdin, e.g. 'notify-send-drift'."
    )
    webhook: str | None = Field(None, description="POSTed the JSON payload (http or https).")
    on: list[Literal["warn", "suspend"]] = Field(
        default_factory=lambda: ["warn", "suspend"], description="Verdicts that alert."
    )
    timeout_s: float = Field(5.0, gt=0)


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
        import urllib.request  # http.client and email: only when a webhook is set

        request = urllib.request.Request(
            settings.webhook,
            data=body,
            headers={"Content-Type": "application/json", "User-Agent": "mir-drift"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=settings.timeout_s) as response:
                response.read()
        except (OSError, ValueError) as exc:
            notes.append(f"alert webhook failed ({exc}): {settings.webhook}")
    return notes
