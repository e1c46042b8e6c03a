"""An action's approval rule: who must approve it, how many, and whether they sign."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Approvals(BaseModel):
    """``actions.NAME.approvals``: a pending flow with this action executes only once
    ``count`` distinct declared reviewers holding one of ``roles`` approved it (the
    requester never counts); with ``signed``, each approval must carry a valid signature
    by the reviewer's declared key (see reviewers.toml)."""

    model_config = ConfigDict(extra="forbid")

    roles: list[str] = Field(
        default_factory=list,
        description="Reviewer roles (reviewers.toml) that may approve; empty: any declared "
        "reviewer.",
    )
    count: int = Field(1, ge=1, le=20, description="Distinct reviewers who must approve.")
    signed: bool = Field(
        False, description="Every approval must be signed by the reviewer's declared key."
    )

    @field_validator("roles")
    @classmethod
    def _roles(cls, value: list[str]) -> list[str]:
        if any(not role.strip() for role in value):
            raise ValueError("a role is empty")
        return value

    def describe(self) -> str:
        """What the rule waits for, in words: "2 approvals (support_lead, signed)"."""
        parts = [", ".join(self.roles)] if self.roles else []
        if self.signed:
            parts.append("signed")
        noun = "approval" if self.count == 1 else "approvals"
        return f"{self.count} {noun}" + (f" ({', '.join(parts)})" if parts else "")
