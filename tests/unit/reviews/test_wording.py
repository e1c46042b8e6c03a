"""The review queue's words: ages and the export's JSON."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mir.reviews import age


def test_ages_in_the_largest_two_units():
    assert [age(s) for s in (-5, 45, 12 * 60, 3 * 3600 + 5 * 60, 2 * 86400 + 4 * 3600)] == [
        "0s",
        "45s",
        "12m",
        "3h 05m",
        "2d 04h",
    ]


@given(st.floats(min_value=0, max_value=10**9, allow_nan=False))
def test_an_age_is_one_of_four_shapes_and_never_grows_backwards(seconds):
    shown = age(seconds)
    assert re.fullmatch(r"\d+s|\d+m|\d+h \d\dm|\d+d \d\dh", shown)
    assert _seconds(age(seconds + 60)) >= _seconds(shown)


def _seconds(shown: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = shown.split()
    if len(parts) == 2 and parts[0].endswith("h"):
        return int(parts[0][:-1]) * 3600 + int(parts[1][:-1]) * 60
    if len(parts) == 2:
        return int(parts[0][:-1]) * 86400 + int(parts[1][:-1]) * 3600
    return int(shown[:-1]) * units[shown[-1]]
