"""Every drift statistic equals its reference implementation within 1e-9."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.drift import statistics as stats

np = pytest.importorskip("numpy")
scipy_stats = pytest.importorskip("scipy.stats")
distance = pytest.importorskip("scipy.spatial.distance")
special = pytest.importorskip("scipy.special")

CATEGORIES = ["reply", "refund", "escalate", "close", "spam"]
counts = st.dictionaries(st.sampled_from(CATEGORIES), st.integers(1, 5000), min_size=1)
values = st.lists(
    st.one_of(
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        st.integers(-50, 50).map(float),  # ties
    ),
    min_size=1,
    max_size=300,
)


def _vectors(reference: dict[str, int], current: dict[str, int]) -> tuple[list, list]:
    keys = sorted(set(reference) | set(current))
    return [reference.get(k, 0) for k in keys], [current.get(k, 0) for k in keys]


def _numpy_psi(expected: np.ndarray, actual: np.ndarray) -> float:
    e = np.clip(expected / expected.sum(), stats.PSI_EPSILON, None)
    a = np.clip(actual / actual.sum(), stats.PSI_EPSILON, None)
    return float(np.sum((a - e) * np.log(a / e)))


@settings(max_examples=200, deadline=None)
@given(counts, counts)
def test_jensen_shannon_matches_scipy(reference, current):
    r, c = _vectors(reference, current)
    expected = distance.jensenshannon(r, c, base=2)
    assert stats.jensen_shannon(reference, current) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts, counts)
def test_psi_matches_the_textbook_formula(reference, current):
    r, c = _vectors(reference, current)
    expected = _numpy_psi(np.array(r, float), np.array(c, float))
    assert stats.psi(reference, current) == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(values, values)
def test_ks_statistic_matches_ks_2samp(reference, current):
    merged = stats.merge_samples(reference, current)
    expected = scipy_stats.ks_2samp(reference, current).statistic
    assert stats.ks_statistic(merged) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(values, values)
def test_wasserstein_matches_scipy(reference, current):
    merged = stats.merge_samples(reference, current)
    expected = scipy_stats.wasserstein_distance(reference, current)
    assert stats.wasserstein(merged) == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 5.0))
def test_kolmogorov_survival_matches_scipy(x):
    assert stats.kolmogorov_sf(x) == pytest.approx(special.kolmogorov(x), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=20, max_size=400), st.floats(-0.5, 0.5))
def test_ks_pvalue_matches_the_asymptotic_distribution(sample, shift):
    reference = sample
    current = [v + shift for v in sample[::2]]
    d = stats.ks_statistic(stats.merge_samples(reference, current))
    n, m = len(reference), len(current)
    expected = scipy_stats.kstwobign.sf(d * math.sqrt(n * m / (n + m)))
    assert stats.ks_pvalue(d, n, m) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 20000), st.integers(1, 20000), st.data())
def test_two_proportion_matches_chi2_without_correction(n_r, n_c, data):
    hits_r = data.draw(st.integers(0, n_r))
    hits_c = data.draw(st.integers(0, n_c))
    z, p = stats.two_proportion(hits_r, n_r, hits_c, n_c)
    pooled = (hits_r + hits_c) / (n_r + n_c)
    if pooled in (0.0, 1.0):
        assert (z, p) == (0.0, 1.0)
        return
    table = [[hits_r, n_r - hits_r], [hits_c, n_c - hits_c]]
    chi2, expected_p, _, _ = scipy_stats.chi2_contingency(table, correction=False)
    assert p == pytest.approx(expected_p, abs=1e-9)
    assert z * z == pytest.approx(chi2, rel=1e-9, abs=1e-9)
    assert p == pytest.approx(2 * scipy_stats.norm.sf(abs(z)), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=200), st.floats(0, 1))
def test_quantile_matches_numpy(sample, q):
    ordered = sorted(sample)
    assert stats.quantile(ordered, q) == pytest.approx(np.quantile(ordered, q), rel=1e-9, abs=1e-9)


def test_numeric_psi_bins_on_reference_deciles_closed_on_the_right():
    reference = [float(v) for v in range(100)]
    edges = stats.decile_edges(reference)
    assert edges == [float(np.quantile(reference, k / 10)) for k in range(1, 10)]
    bins = np.searchsorted(edges, reference, side="left")
    assert np.bincount(bins).tolist() == [10] * 10
