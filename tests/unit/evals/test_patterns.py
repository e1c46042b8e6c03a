"""Regex assertions on RE2: any pattern either compiles or is refused with a reason,
and matching finishes in time linear in the text, whatever the pattern."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from mir.evals.patterns import compile_pattern

ATOMS = st.sampled_from(["a", "b", ".", r"\w", r"\s", "[ab]", "(a|aa)", "(?<=a)", r"\1", "("])
REPEATS = st.sampled_from(["", "*", "+", "?", "{1,30}", "{2}", "{1,}", "++"])


@st.composite
def nested_patterns(draw) -> str:
    pattern = draw(ATOMS) + draw(REPEATS)
    for _ in range(draw(st.integers(0, 3))):
        pattern = f"({pattern}{draw(ATOMS)}){draw(REPEATS)}"
    return pattern


@settings(max_examples=300, deadline=None)
@given(nested_patterns(), st.text(alphabet="ab! ", max_size=60))
def test_any_pattern_compiles_or_is_refused_and_search_is_fast(pattern: str, text: str):
    compiled = compile_pattern(pattern)
    if isinstance(compiled, str):
        assert compiled  # a reason, never an exception
        return
    started = time.perf_counter()
    compiled.search(text)
    compiled.search("a" * 40 + "!")
    assert time.perf_counter() - started < 0.5


def test_the_patterns_that_hang_python_re_finish():
    for pattern in (r"^(a+)+$", r"^(a{1,30}){1,30}$", r"^(a|aa){1,40}$"):
        compiled = compile_pattern(pattern)
        started = time.perf_counter()
        assert compiled.search("a" * 5000 + "!") is None
        assert time.perf_counter() - started < 0.5


def test_matches_agree_with_python_re_on_ordinary_patterns():
    for pattern, text in [
        (r"(?i)REFUND", "a refund"),
        (r"^\d{1,3}(\.\d{1,3}){3}$", "10.0.0.1"),
        (r"(?P<word>\w+)", "hello"),
        (r"colou?r", "color"),
        (r"^$", ""),
    ]:
        assert (compile_pattern(pattern).search(text) is None) == (re.search(pattern, text) is None)
