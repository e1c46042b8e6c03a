"""The inbox's pure parts: page windows, durations, and a correction read from a form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mir.inbox import views
from mir.inbox.guards import LoginBrake, same_origin, same_token


@given(total=st.integers(0, 5000), size=st.integers(1, 200))
def test_pages_cover_every_item_exactly_once(total: int, size: int) -> None:
    first = views.PageWindow(number=1, size=size, total=total)
    seen = []
    for number in range(1, first.pages + 1):
        window = views.PageWindow(number=number, size=size, total=total)
        count = max(0, min(size, total - window.offset))
        seen.extend(range(window.offset, window.offset + count))
        assert (window.next is None) == (number == first.pages)
        assert (window.previous is None) == (number == 1)
    assert seen == list(range(total))


@pytest.mark.parametrize(
    ("raw", "number"),
    [(None, 1), ("", 1), ("0", 1), ("-3", 1), ("2", 2), ("1e9", 1), ("9" * 40, 1), ("²", 1)],
)
def test_a_hostile_page_number_is_page_one_or_its_number(raw, number) -> None:
    assert views.page_number(raw) == number


def test_page_size_is_bounded() -> None:
    assert views.page_size("100000") == views.PAGE_SIZE
    assert views.page_size("500") == views.MAX_PAGE_SIZE
    assert views.page_size("0") == 1 and views.page_size(None) == views.PAGE_SIZE


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "-"), (float("nan"), "-"), (-5, "0s"), (42.9, "42s"), (600, "10m"), (3600, "1h"),
     (3900, "1h 5m"), (86400 * 2, "2d"), (86400 + 3600 * 4, "1d 4h")],
)  # fmt: skip
def test_durations(seconds, text) -> None:
    assert views.duration(seconds) == text


def test_time_left() -> None:
    assert views.time_left(10, None) == "no TTL"
    assert views.time_left(100, 300) == "3m"
    assert views.time_left(300, 300) == "expired"


DECISION = {"action": "refund", "confidence": 0.4, "amount": 60, "reason": "half missing",
            "tags": ["a"], "urgent": False}  # fmt: skip


def test_a_correction_keeps_each_fields_type_and_only_what_changed() -> None:
    form = {"csrf": "t", "reason": "why", "set.amount": " 30 ", "set.reason": "half missing",
            "set.tags": '["a", "b"]', "set.urgent": "false"}  # fmt: skip
    assert views.read_correction(DECISION, form) == {"amount": 30, "tags": ["a", "b"]}
    assert views.read_correction(DECISION, {"set.reason": "42"}) == {"reason": "42"}


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"set.amount": "60"}, "changes no field"),
        ({}, "changes no field"),
        ({"set.action": "deny"}, "no field 'action'"),
        ({"set.confidence": "1"}, "no field 'confidence'"),
        ({"set.iban": "DE00"}, "no field 'iban'"),
        ({"set.amount": "thirty"}, "is not a number"),
        ({"set.amount": "NaN"}, "is not a number"),
        ({"set.amount": "Infinity"}, "is not a number"),
        ({"set.amount": "true"}, "is not a number"),
        ({"set.amount": '"30"'}, "is not a number"),
        ({"set.urgent": "yes"}, "is not a boolean"),
    ],
)
def test_a_correction_the_page_cannot_read_is_refused(form, message) -> None:
    with pytest.raises(views.CorrectionError, match=message):
        views.read_correction(DECISION, form)


@given(amount=st.floats(0, 1e6, allow_nan=False) | st.integers(0, 10**9))
def test_any_number_typed_into_a_number_field_is_that_number(amount) -> None:
    if amount == DECISION["amount"] and type(amount) is int:
        return
    assert views.read_correction(DECISION, {"set.amount": repr(amount)}) == {"amount": amount}


def test_tokens_compare_only_equal_strings() -> None:
    assert same_token("abc", "abc")
    for expected, given_ in (("abc", "abd"), ("abc", None), (None, None), ("", ""), ("a", ["a"])):
        assert not same_token(expected, given_)


def test_same_origin() -> None:
    host = {"host": "127.0.0.1:8765"}
    assert same_origin(host)  # no browser headers: the CSRF token alone decides
    assert same_origin({**host, "origin": "http://127.0.0.1:8765"})
    assert not same_origin({**host, "origin": "http://127.0.0.1:8766"})
    assert not same_origin({**host, "origin": "null"})
    assert not same_origin({**host, "referer": "https://evil.example/127.0.0.1:8765"})
    assert same_origin({**host, "referer": "http://127.0.0.1:8765/flows/x"})


def test_the_login_brake_blocks_a_name_for_its_window() -> None:
    now = [0.0]
    brake = LoginBrake(attempts=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert not brake.blocked("ana")
        brake.failed("ana")
    assert brake.blocked("ana") and not brake.blocked("bo")
    now[0] = 61
    assert not brake.blocked("ana")
    brake.failed("ana")
    brake.succeeded("ana")
    assert not brake.blocked("ana")
