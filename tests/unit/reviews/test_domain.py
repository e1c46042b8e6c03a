"""The queue's pure parts: key fields, what a flow waits for, a value on one line."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from mir.reviews import compact, key_fields
from mir.reviews.domain import waits_for
from mir.reviews.reminders import remind_after


def test_key_fields_are_the_parameters_then_the_confidence():
    decision = {"confidence": 0.4, "action": "refund", "amount": 80, "reason": "x"}
    assert list(key_fields(decision)) == ["amount", "reason", "confidence"]
    assert key_fields({"verdict": "a", "p": 0.1, "n": 1}, "verdict", "p") == {"n": 1, "p": 0.1}


def test_what_a_flow_waits_for():
    assert waits_for(None, []) == "review"
    rule = SimpleNamespace(count=2, roles=["lead", "ops"])
    assert waits_for(rule, ["ana"]) == "1 of 2 approvals (lead, ops)"
    assert waits_for(rule, ["ana", "ana"]) == "1 of 2 approvals (lead, ops)"  # distinct
    assert waits_for(SimpleNamespace(count=1, roles=[]), []) == "0 of 1 approval"
    assert waits_for(SimpleNamespace(count="2", roles=None), []) == "review"


def test_remind_after_is_read_defensively():
    assert remind_after(None) is None
    assert remind_after(SimpleNamespace(review=SimpleNamespace())) is None
    assert remind_after(SimpleNamespace(review=SimpleNamespace(remind_after=60))) == 60.0
    for odd in (0, -5, True, "60"):
        assert remind_after(SimpleNamespace(review=SimpleNamespace(remind_after=odd))) is None


@given(st.one_of(st.text(), st.dictionaries(st.text(), st.integers()), st.integers()))
def test_a_value_is_one_bounded_line(value):
    shown = compact(value, 30)
    assert len(shown) <= 30 and "\n" not in shown
