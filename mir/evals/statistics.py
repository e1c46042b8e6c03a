"""The statistics the gate and the reports rest on (stdlib only, exact where it matters).

- McNemar's exact test: on paired cases only the discordant ones (broken, fixed) carry
  information; under "no change" each is broken or fixed with probability 1/2, so the
  p-value is a two-sided binomial test with p = 0.5 on ``broken + fixed`` trials. It is
  computed with integers (no floating-point tail sums), so it matches
  ``scipy.stats.binomtest(b, b + c, 0.5).pvalue`` to the last bits.
- pass^k / pass@k over a case's repeats.
- Expected calibration error: how far a confidence is from the share of runs it got
  right, over 10 equal-width bins, weighted by bin size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

ECE_BINS = 10


def mcnemar_exact(broken: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value for ``broken`` vs ``fixed`` discordant pairs.

    For p = 0.5 the binomial distribution is symmetric, so the two-sided p-value is
    twice the smaller tail, capped at 1 (equal counts give exactly 1).
    """
    if broken < 0 or fixed < 0:
        raise ValueError("counts must be non-negative")
    trials = broken + fixed
    if trials == 0:
        return 1.0
    smaller = min(broken, fixed)
    if 2 * smaller == trials:
        return 1.0
    tail = sum(math.comb(trials, i) for i in range(smaller + 1))
    # 2 * tail / 2**trials as one correctly rounded division of exact integers
    return min(1.0, tail / (1 << (trials - 1)))


def pass_all(passed: Sequence[bool]) -> bool:
    """pass^k: every one of the k runs passed (False for no runs)."""
    return bool(passed) and all(passed)


def pass_any(passed: Sequence[bool]) -> bool:
    """pass@k: at least one of the k runs passed."""
    return any(passed)


def is_flaky(passed: Sequence[bool]) -> bool:
    """Some runs passed and some failed: the case's outcome depends on the draw."""
    return any(passed) and not all(passed)


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], *, bins: int = ECE_BINS
) -> float | None:
    """ECE over ``bins`` equal-width bins of [0, 1] (None without samples).

    A confidence of exactly 1 falls in the last bin; values outside [0, 1] are clamped
    (a model may report 1.2): calibration is about the number the contract compares.
    """
    if len(confidences) != len(correct):
        raise ValueError("confidences and outcomes differ in length")
    if not confidences:
        return None
    totals = [0] * bins
    right = [0] * bins
    conf_sum = [0.0] * bins
    for raw, ok in zip(confidences, correct, strict=True):
        value = min(1.0, max(0.0, float(raw)))
        index = min(int(value * bins), bins - 1)
        totals[index] += 1
        right[index] += 1 if ok else 0
        conf_sum[index] += value
    count = len(confidences)
    return sum(
        abs(right[i] / totals[i] - conf_sum[i] / totals[i]) * totals[i] / count
        for i in range(bins)
        if totals[i]
    )


def wilson_interval(
    successes: int, trials: int, *, z: float = 1.959963984540054
) -> tuple[float, float]:
    """Wilson score interval for a pass rate (95 % by default); (0, 1) for no trials."""
    if trials == 0:
        return (0.0, 1.0)
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    spread = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    spread /= denominator
    return (max(0.0, centre - spread), min(1.0, centre + spread))
