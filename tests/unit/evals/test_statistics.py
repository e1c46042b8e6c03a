"""The gate's statistics against independent references (scipy, a hand computation)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.evals.statistics import (
    expected_calibration_error,
    is_flaky,
    mcnemar_exact,
    pass_all,
    pass_any,
    wilson_interval,
)

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a dev-only reference")


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_equals_scipy_exact_binomial_test(broken: int, fixed: int) -> None:
    if broken + fixed == 0:
        assert mcnemar_exact(0, 0) == 1.0
        return
    expected = scipy_stats.binomtest(broken, broken + fixed, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(broken, fixed) == pytest.approx(expected, abs=1e-12, rel=1e-9)


def test_mcnemar_small_tables_exactly() -> None:
    for broken in range(40):
        for fixed in range(40):
            if broken + fixed:
                reference = scipy_stats.binomtest(broken, broken + fixed, 0.5).pvalue
                assert abs(mcnemar_exact(broken, fixed) - reference) < 1e-12


def test_mcnemar_issue_scenarios() -> None:
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)  # 6 of 40 broken: p = 0.031
    assert mcnemar_exact(2, 2) == 1.0  # noise
    assert mcnemar_exact(1, 0) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_pass_k() -> None:
    assert pass_all([True, True]) and not pass_all([True, False]) and not pass_all([])
    assert pass_any([False, True]) and not pass_any([False, False])
    assert is_flaky([True, False]) and not is_flaky([True, True]) and not is_flaky([False])


def test_ece_by_hand() -> None:
    # bin 9 (0.9, 0.95): mean 0.925, accuracy 1/2 -> |0.5 - 0.925| * 2/5 = 0.17
    # bin 2 (0.2): accuracy 0 -> 0.2 * 1/5 = 0.04
    # bin 6 (0.6, 0.7): mean 0.65, accuracy 1 -> 0.35 * 2/5 = 0.14
    confidences = [0.9, 0.95, 0.2, 0.6, 0.7]
    correct = [True, False, False, True, True]
    assert expected_calibration_error(confidences, correct) == pytest.approx(0.17 + 0.04 + 0.14)


def test_ece_edges() -> None:
    assert expected_calibration_error([], []) is None
    assert expected_calibration_error([1.0, 1.0], [True, True]) == 0.0  # 1.0 in the last bin
    assert expected_calibration_error([1.3], [False]) == pytest.approx(1.0)  # clamped
    with pytest.raises(ValueError):
        expected_calibration_error([0.5], [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_ece_matches_a_direct_definition(samples: list[tuple[float, bool]]) -> None:
    confidences = [c for c, _ in samples]
    correct = [ok for _, ok in samples]
    total = 0.0
    for low in range(10):
        members = [(c, ok) for c, ok in samples if min(int(c * 10), 9) == low]
        if members:
            accuracy = sum(ok for _, ok in members) / len(members)
            mean = sum(c for c, _ in members) / len(members)
            total += abs(accuracy - mean) * len(members) / len(samples)
    assert expected_calibration_error(confidences, correct) == pytest.approx(total)
    assert 0.0 <= total <= 1.0


def test_wilson_interval_contains_the_rate() -> None:
    low, high = wilson_interval(36, 40)
    assert low < 0.9 < high
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 10)[0] == 0.0
