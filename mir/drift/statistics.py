"""The drift statistics, stdlib only, each matching a reference implementation.

Inputs are what SQL hands back (counts per category, the merged distinct values of two
samples with their counts), never per-decision rows: the store aggregates, this module
does arithmetic on the aggregates. Tests compare every function with scipy / numpy on
generated samples within 1e-9 (``tests/unit/drift/test_statistics.py``).

- Jensen-Shannon **distance**, base 2 (in [0, 1]): ``scipy.spatial.distance.jensenshannon(p,
  q, base=2)``.
- PSI, textbook: ``sum((c - r) * ln(c / r))`` over bins, ``r`` and ``c`` the reference and
  current proportions, each clipped below at ``PSI_EPSILON`` (1e-4) so an empty bin counts
  as rare rather than infinite. Numeric fields are binned on the reference's deciles
  (linear interpolation, duplicate edges dropped, bins closed on the right).
- Kolmogorov-Smirnov two-sample statistic ``D = max |F_ref - F_cur|`` (``ks_2samp``'s
  statistic); its p-value is Smirnov's asymptotic one, ``Q_KS(D * sqrt(n m / (n + m)))``
  (``scipy.stats.kstwobign.sf``). For small samples ks_2samp's exact p-value is more
  accurate; drift windows hold hundreds of decisions at least (``min_samples``).
- Wasserstein-1 over the two empirical distributions (``scipy.stats.wasserstein_distance``).
- Two-proportion z-test, pooled variance, two-sided (equal to ``chi2_contingency`` without
  continuity correction on the 2x2 table).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

PSI_EPSILON = 1e-4


def jensen_shannon(reference: Mapping[str, float], current: Mapping[str, float]) -> float:
    """JS distance (base 2) between two count (or weight) tables over categories."""
    total_r, total_c = sum(reference.values()), sum(current.values())
    if total_r <= 0 or total_c <= 0:
        return math.nan
    divergence = 0.0
    for key in set(reference) | set(current):
        p = reference.get(key, 0.0) / total_r
        q = current.get(key, 0.0) / total_c
        m = (p + q) / 2
        if p > 0:
            divergence += p * math.log(p / m)
        if q > 0:
            divergence += q * math.log(q / m)
    return math.sqrt(max(divergence / 2 / math.log(2), 0.0))


def psi(reference: Mapping[str, float], current: Mapping[str, float]) -> float:
    """Population stability index of the current counts against the reference counts."""
    total_r, total_c = sum(reference.values()), sum(current.values())
    if total_r <= 0 or total_c <= 0:
        return math.nan
    value = 0.0
    for key in set(reference) | set(current):
        r = max(reference.get(key, 0.0) / total_r, PSI_EPSILON)
        c = max(current.get(key, 0.0) / total_c, PSI_EPSILON)
        value += (c - r) * math.log(c / r)
    return value


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default, DuckDB's ``quantile_cont``)."""
    n = len(sorted_values)
    position = q * (n - 1)
    low = math.floor(position)
    high = min(low + 1, n - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def decile_edges(sorted_reference: Sequence[float]) -> list[float]:
    """Inner bin edges for numeric PSI: the reference deciles, duplicates dropped."""
    edges = [quantile(sorted_reference, k / 10) for k in range(1, 10)]
    return sorted(set(edges))


def ks_statistic(merged: Sequence[tuple[float, int, int]]) -> float:
    """``max |F_ref - F_cur|`` from (value, reference count, current count), sorted by value."""
    n_r = sum(r for _, r, _ in merged)
    n_c = sum(c for _, _, c in merged)
    if not n_r or not n_c:
        return math.nan
    cum_r = cum_c = 0
    best = 0.0
    for _, r, c in merged:
        cum_r += r
        cum_c += c
        best = max(best, abs(cum_r / n_r - cum_c / n_c))
    return best


def wasserstein(merged: Sequence[tuple[float, int, int]]) -> float:
    """Wasserstein-1 distance: the area between the two empirical CDFs."""
    n_r = sum(r for _, r, _ in merged)
    n_c = sum(c for _, _, c in merged)
    if not n_r or not n_c:
        return math.nan
    cum_r = cum_c = 0
    area = 0.0
    for (value, r, c), (following, _, _) in itertools.pairwise(merged):
        cum_r += r
        cum_c += c
        area += abs(cum_r / n_r - cum_c / n_c) * (following - value)
    return area


def kolmogorov_sf(x: float) -> float:
    """Survival function of the Kolmogorov distribution (``scipy.special.kolmogorov``)."""
    if x < 0.1:
        return 1.0  # 1 - 1e-50 and closer: the series below would divide by ~0
    if x < 1.0:
        # The Jacobi-theta form converges fast for small x (the alternating series does not).
        factor = math.sqrt(2 * math.pi) / x
        total = sum(math.exp(-((2 * k - 1) ** 2) * math.pi**2 / (8 * x * x)) for k in range(1, 12))
        return max(0.0, min(1.0, 1.0 - factor * total))
    total = sum((-1) ** (k - 1) * math.exp(-2 * k * k * x * x) for k in range(1, 101))
    return max(0.0, min(1.0, 2 * total))


def ks_pvalue(statistic: float, n_reference: int, n_current: int) -> float:
    """Smirnov's asymptotic two-sided p-value for the two-sample KS statistic."""
    if not n_reference or not n_current or math.isnan(statistic):
        return math.nan
    effective = n_reference * n_current / (n_reference + n_current)
    return kolmogorov_sf(statistic * math.sqrt(effective))


def two_proportion(
    hits_reference: int, n_reference: int, hits_current: int, n_current: int
) -> tuple[float, float]:
    """(z, two-sided p) of the pooled two-proportion z-test, current minus reference."""
    if not n_reference or not n_current:
        return math.nan, math.nan
    p_r, p_c = hits_reference / n_reference, hits_current / n_current
    pooled = (hits_reference + hits_current) / (n_reference + n_current)
    variance = pooled * (1 - pooled) * (1 / n_reference + 1 / n_current)
    if variance <= 0:
        return 0.0, 1.0  # both rates 0 (or both 1): no evidence of a difference
    z = (p_c - p_r) / math.sqrt(variance)
    return z, math.erfc(abs(z) / math.sqrt(2))


def merge_samples(
    reference: Sequence[float], current: Sequence[float]
) -> list[tuple[float, int, int]]:
    """The merged-distinct-values form of two samples (what the SQL returns), for tests
    and small in-memory uses."""
    counts: dict[float, list[int]] = {}
    for value in reference:
        counts.setdefault(value, [0, 0])[0] += 1
    for value in current:
        counts.setdefault(value, [0, 0])[1] += 1
    return [(value, r, c) for value, (r, c) in sorted(counts.items())]
