"""Signing a review and judging a stored one against the declared reviewers.

A review event stores the statement, its signature and the public key that signed it
(``signer_key``). Judged against reviewers.toml, a review is one of:

- ``ok``: signed by the key the reviewer has declared, the statement matches the event;
- ``unsigned``: no signature (a finding only where the action requires signatures);
- ``unknown_reviewer``: the reviewer is not declared;
- ``wrong_key``: a valid signature by a key that is not the reviewer's declared one;
- ``forged``: a signature that no key it names verifies, or a statement that does not
  say what the event says (another flow, verdict, reviewer, time, correction or decision).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from mir.reviewers.batch import Check, verify_one
from mir.reviewers.domain import Reviewer, Statement, StatementVerdict, make_statement
from mir.reviewers.keys import SigningKey, verify_signature

Finding = Literal["ok", "unsigned", "unknown_reviewer", "wrong_key", "forged"]


@dataclass(frozen=True)
class SignedReview:
    statement: Statement
    signature: str | None
    signer_key: str | None

    def data(self) -> dict[str, Any]:
        """The review event's fields for the statement and its signature."""
        return {
            "statement": self.statement.model_dump(mode="json"),
            "signature": self.signature,
            "signer_key": self.signer_key,
        }


def sign_review(
    key: SigningKey | None,
    *,
    flow_id: str,
    decision: Any,
    verdict: StatementVerdict,
    reviewer: str,
    at: str,
    correction: dict[str, Any] | None = None,
) -> SignedReview:
    """The statement for this review, signed by ``key`` (None: unsigned)."""
    statement = make_statement(flow_id, decision, verdict, reviewer, at, correction)
    if key is None:
        return SignedReview(statement, None, None)
    return SignedReview(statement, key.sign(statement), key.public_key)


def key_matches(reviewer: Reviewer, key: SigningKey | None) -> bool:
    return key is not None and key.public_key == reviewer.public_key


def judge_review(
    data: dict[str, Any],
    *,
    flow_id: str,
    decision: Any,
    reviewers: dict[str, Reviewer],
    verified: Container[Check] = (),
) -> tuple[Finding, str]:
    """How a stored review event (its ``data``) stands; the second item says why.
    ``verified``: (key, canonical statement, signature) checks already known to verify
    (``verify_many``), not verified again."""
    raw = data.get("statement")
    signature = data.get("signature")
    if raw is None and not signature:
        return "unsigned", "no signed statement"
    try:
        statement = Statement.model_validate(raw)
    except ValidationError:
        return "forged", "the statement is malformed"
    expected = make_statement(
        flow_id,
        decision,
        data.get("verdict"),  # type: ignore[arg-type]
        str(data.get("by")),
        str(data.get("at")),
        data.get("correction"),
    ) if data.get("verdict") in ("approve", "reject") else None  # fmt: skip
    if expected is None or statement != expected:
        return "forged", _mismatch(statement, expected)
    reviewer = reviewers.get(statement.reviewer)
    if reviewer is None:
        return "unknown_reviewer", f"{statement.reviewer!r} is not a declared reviewer"
    message = statement.canonical()
    if (reviewer.public_key, message, signature) in verified or verify_one(
        reviewer.public_key, message, signature
    ):
        return "ok", "signed by the declared key"
    signer = data.get("signer_key")
    if isinstance(signer, str) and verify_signature(signer, statement, signature):
        return "wrong_key", f"signed by a key that is not {reviewer.name}'s declared key"
    if not signature:
        return "unsigned", "no signature"
    return "forged", "the signature does not verify"


def _mismatch(statement: Statement, expected: Statement | None) -> str:
    if expected is None:
        return "the review has no verdict a statement could cover"
    for field in ("flow_id", "decision_sha256", "verdict", "reviewer", "at", "correction"):
        if getattr(statement, field) != getattr(expected, field):
            what = "decision" if field == "decision_sha256" else field
            return f"the statement's {what} is not the flow's"
    return "the statement is not the review's"
