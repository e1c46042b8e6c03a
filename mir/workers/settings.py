"""``[tool.mir.workers]``: how the fleet's workers watch each other."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class WorkerSettings(BaseModel):
    """``[tool.mir.workers]``: heartbeats, when a silent worker counts as dead, and the
    fallback poll for submissions (procrastinate wakes a worker by LISTEN/NOTIFY, which
    can miss a wake-up: the poll bounds the wait)."""

    model_config = ConfigDict(extra="forbid")

    heartbeat_s: float = Field(
        5.0, gt=0, le=600, description="Seconds between a worker's heartbeats in Postgres."
    )
    stalled_s: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="Seconds without a heartbeat after which a worker counts as dead: the "
        "flow it held is retried by another worker (at least 2x heartbeat_s).",
    )
    poll_s: float = Field(
        0.5, gt=0, le=60, description="Fallback poll for new submissions, in seconds."
    )

    @model_validator(mode="after")
    def _dead_after_missed_beats(self) -> Self:
        if self.stalled_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"stalled_s ({self.stalled_s:g}) must be at least 2 x heartbeat_s "
                f"({self.heartbeat_s:g}): a live worker would count as dead"
            )
        return self


def attempt_id(flow_id: str, attempt: int) -> str:
    """The flow id attempt ``n`` of a submission decides under: the submitted id first,
    then ``<id>-r<n>`` (a retry never reuses an id a dead worker may have traced)."""
    return flow_id if attempt == 0 else f"{flow_id}-r{attempt}"
