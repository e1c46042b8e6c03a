"""``[tool.mir.models]``: when a canary is rolled back automatically."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CanarySettings(BaseModel):
    """``[tool.mir.models]``: the canary's automatic rollback."""

    model_config = ConfigDict(extra="forbid")

    margin: float = Field(
        0.05, gt=0, lt=1, description="How much worse (absolute rate) the canary may be."
    )
    min_samples: int = Field(100, ge=1, description="Decisions needed in each arm.")
    p_value: float = Field(0.01, gt=0, lt=1, description="Two-proportion test level.")
    check_every: int = Field(
        200, ge=1, description="An in-process Agent checks its canary every N decisions."
    )
