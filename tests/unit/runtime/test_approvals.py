"""Counting approvals toward an action's rule (pure, no store)."""

from __future__ import annotations

import pytest

from mir.reviewers import Reviewer, generate_key, sign_review
from mir.runtime.approvals import Rule, counted_approvals, effective

KEYS = {name: generate_key() for name in ("ana", "bob", "cy", "sam")}
ROLES = {"ana": ("lead",), "bob": ("lead",), "cy": ("support",), "sam": ("lead",)}
REVIEWERS = {n: Reviewer(name=n, roles=ROLES[n], public_key=k.public_key) for n, k in KEYS.items()}
PROPOSAL = {"action": "refund", "amount": 149, "confidence": 0.4}


def review(by, *, correction=None, verdict="approve", key=None, at="2026-12-01T10:00:00+00:00"):
    signed = sign_review(
        KEYS[by] if key is None else key, flow_id="f", decision=PROPOSAL, verdict=verdict,
        reviewer=by, at=at, correction=correction,
    )  # fmt: skip
    return {"by": by, "verdict": verdict, "at": at, "correction": correction, **signed.data()}


def count(reviews, *, target=PROPOSAL, signed=True, roles=(("lead",),), requester="sam"):
    rule = Rule(roles=roles, count=2, signed=signed, declared=True)
    return counted_approvals(
        reviews, flow_id="f", proposal=PROPOSAL, target=target, rule=rule,
        reviewers=REVIEWERS, requested_by=requester,
    )  # fmt: skip


def test_distinct_qualified_reviewers_count_once_each():
    assert count([review("ana"), review("ana", at="later"), review("bob")]) == ["ana", "bob"]


@pytest.mark.parametrize(
    "reviews",
    [
        [review("sam")],  # the requester
        [review("cy")],  # not a lead
        [review("ana", verdict="reject")],
        [review("ana", key=KEYS["bob"])],  # a foreign key
        [{**review("ana"), "signature": None}],  # unsigned where signatures are required
        [review("ana", correction={"amount": 80})],  # approved another decision
        [{**review("ana"), "by": "mallory"}],  # not declared
    ],
)
def test_what_never_counts(reviews):
    assert count(reviews) == []


def test_an_approval_counts_toward_the_decision_it_approves():
    corrected = effective(PROPOSAL, {"amount": 80})
    reviews = [review("ana", correction={"amount": 80}), review("bob")]
    assert count(reviews, target=corrected) == ["ana"]
    assert count(reviews) == ["bob"]


def test_unsigned_approvals_count_where_no_signature_is_required():
    assert count([{**review("ana"), "signature": None, "statement": None}], signed=False) == ["ana"]
