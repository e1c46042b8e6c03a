"""The canonical review statement, its digest and its Ed25519 signature."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mir.reviewers import (
    Statement,
    canonical_json,
    decision_digest,
    generate_key,
    judge_review,
    make_statement,
    sign_review,
    verify_signature,
)
from mir.reviewers.domain import Reviewer

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
decisions = st.fixed_dictionaries(
    {"action": st.sampled_from(["refund", "reply", "escalate"])},
    optional={
        "params": st.dictionaries(st.text(max_size=8), values, max_size=4),
        "reason": st.text(max_size=20),
    },
)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (1, 1.0 and true are three values)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    return a == b


@given(decisions, decisions)
def test_two_decisions_have_one_digest_exactly_when_they_are_the_same_value(a, b):
    assert (decision_digest(a) == decision_digest(b)) == same(a, b)


@given(decisions)
def test_the_digest_ignores_key_order_and_survives_a_json_round_trip(decision):
    shuffled = json.loads(json.dumps(dict(reversed(list(decision.items())))))
    assert decision_digest(shuffled) == decision_digest(decision)


@pytest.mark.parametrize(
    "changed",
    [
        {"action": "refund", "params": {"amount": 80.0}},  # a float, not the int
        {"action": "refund", "params": {"amount": True}},
        {"action": "refund", "params": {"amount": "80"}},
        {"action": "refund", "params": {"amount": 80, "note": None}},
        {"action": "Refund", "params": {"amount": 80}},
    ],
)
def test_any_change_of_type_or_key_changes_the_digest(changed):
    assert decision_digest(changed) != decision_digest(
        {"action": "refund", "params": {"amount": 80}}
    )


def test_the_canonical_form_is_sorted_compact_utf8_and_refuses_nan():
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    with pytest.raises(ValueError):
        canonical_json({"amount": float("nan")})


DECISION = {"action": "refund", "params": {"order_id": "A1", "amount": 149}}


def signed(key, **overrides):
    fields = {
        "flow_id": "f1", "decision": DECISION, "verdict": "approve", "reviewer": "alice",
        "at": "2026-12-01T10:00:00+00:00", "correction": None, **overrides,
    }  # fmt: skip
    review = sign_review(key, **fields)
    data = {"by": fields["reviewer"], "verdict": fields["verdict"], "at": fields["at"],
            "correction": fields["correction"], **review.data()}  # fmt: skip
    return review, data


def test_a_signature_verifies_under_its_key_only():
    key, other = generate_key(), generate_key()
    review, _ = signed(key)
    assert verify_signature(key.public_key, review.statement, review.signature)
    assert not verify_signature(other.public_key, review.statement, review.signature)
    moved = review.statement.model_copy(update={"verdict": "reject"})
    assert not verify_signature(key.public_key, moved, review.signature)
    assert not verify_signature(key.public_key, review.statement, "not base64!")
    assert not verify_signature(key.public_key, review.statement, None)


def test_a_stored_review_is_judged_ok_unsigned_unknown_wrong_key_or_forged():
    alice, mallory = generate_key(), generate_key()
    reviewers = {"alice": Reviewer(name="alice", roles=("lead",), public_key=alice.public_key)}

    def judge(data, decision=DECISION):
        return judge_review(data, flow_id="f1", decision=decision, reviewers=reviewers)[0]

    assert judge(signed(alice)[1]) == "ok"
    assert judge(signed(None)[1]) == "unsigned"
    assert judge(signed(mallory, reviewer="bob")[1]) == "unknown_reviewer"
    assert judge(signed(mallory)[1]) == "wrong_key"
    _, data = signed(alice)
    assert (
        judge(data, decision={**DECISION, "params": {"order_id": "A1", "amount": 1490}}) == "forged"
    )
    data["statement"]["at"] = "2026-12-02T10:00:00+00:00"  # statement edited, event too
    data["at"] = data["statement"]["at"]
    assert judge(data) == "forged"
    _, data = signed(alice)
    data["signature"] = data["signature"][:-4] + "AAA="
    assert judge(data) == "forged"
    _, data = signed(alice, correction={"amount": 80})
    assert judge(data) == "ok"
    data["correction"] = {"amount": 8000}
    assert judge(data) == "forged"


def test_a_statement_names_every_field_it_covers():
    statement = make_statement("f1", DECISION, "reject", "alice", "t", None)
    assert set(json.loads(statement.canonical())) == {
        "v", "flow_id", "decision_sha256", "verdict", "reviewer", "at", "correction",
    }  # fmt: skip
    assert isinstance(Statement.model_validate_json(statement.canonical()), Statement)
