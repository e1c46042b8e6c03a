"""Reviewers and the statement a reviewer signs (pure: stdlib + pydantic).

A review statement is what a signature covers: the flow, the sha256 of the exact
decision the reviewer saw (its canonical JSON), the verdict, who, when, and the
correction if any. Its canonical form is JSON with sorted keys, no spaces, UTF-8, and no
NaN or infinity: the same statement always gives the same bytes, and any change of the
decision (a value, a type: 1 is not 1.0 is not true, a key) gives another digest.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

KEY_PREFIX = "ed25519:"
# A public key line: "ed25519:" + base64 of the 32 raw bytes (44 characters, one "=").
PUBLIC_KEY = re.compile(r"^ed25519:[A-Za-z0-9+/]{43}=$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
STATEMENT_VERSION = 1

StatementVerdict = Literal["approve", "reject"]


class Reviewer(BaseModel):
    """A reviewer declared in the project's ``reviewers.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The reviewer's name (`mir approve --by NAME`).")
    roles: tuple[str, ...] = Field(
        default=(), description="Roles an action's `approvals.roles` may ask for."
    )
    public_key: str = Field(description='"ed25519:" + base64 of the 32 raw bytes.')

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                f"invalid reviewer name {value!r}: letters, digits, '_', '.', '-' (at most 64)"
            )
        return value

    @field_validator("roles")
    @classmethod
    def _roles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not role.strip() for role in value):
            raise ValueError("a role is empty")
        return value

    @field_validator("public_key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not PUBLIC_KEY.match(value):
            raise ValueError(
                "public_key must be 'ed25519:' + base64 of 32 bytes "
                "(what `mir reviewers keygen` prints)"
            )
        return value

    @property
    def fingerprint(self) -> str:
        """A short, stable name for the key (first 16 hex digits of its sha256)."""
        return hashlib.sha256(self.public_key.encode()).hexdigest()[:16]


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, UTF-8, no NaN."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def decision_digest(decision: Any) -> str:
    """``sha256:<hex>`` of the decision's canonical JSON (action and parameters)."""
    return "sha256:" + hashlib.sha256(canonical_json(decision)).hexdigest()


class Statement(BaseModel):
    """What a reviewer signs. ``decision_sha256`` is the digest of the decision the
    reviewer was shown (the model's proposal); ``correction`` the parameters they set
    instead (None: none), so the decision that runs is the proposal with it applied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int = STATEMENT_VERSION
    flow_id: str
    decision_sha256: str
    verdict: StatementVerdict
    reviewer: str
    at: str
    correction: dict[str, Any] | None = None

    def canonical(self) -> bytes:
        return canonical_json(self.model_dump(mode="json"))


def make_statement(
    flow_id: str,
    decision: Any,
    verdict: StatementVerdict,
    reviewer: str,
    at: str,
    correction: dict[str, Any] | None = None,
) -> Statement:
    return Statement(
        flow_id=flow_id,
        decision_sha256=decision_digest(decision),
        verdict=verdict,
        reviewer=reviewer,
        at=at,
        correction=correction,
    )
