"""Cohen's kappa equals sklearn's cohen_kappa_score (the reference) on random inputs."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from mir.evals.kappa import agreement

LABELS = ["pass", "fail", "A", "B", "tie"]
pairs = st.lists(
    st.tuples(st.sampled_from(LABELS[:3]), st.sampled_from(LABELS[:3])), min_size=1, max_size=60
)


def sklearn_kappa(human: list[str], judge: list[str]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the undefined case warns before returning NaN
        return float(cohen_kappa_score(human, judge))


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_kappa_equals_sklearn(labelled: list[tuple[str, str]]) -> None:
    human, judge = [h for h, _ in labelled], [j for _, j in labelled]
    ours, reference = agreement(human, judge).kappa, sklearn_kappa(human, judge)
    if math.isnan(reference):
        assert ours is None
    else:
        assert ours == pytest.approx(reference, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pairs)
def test_counts_and_raw_agreement(labelled: list[tuple[str, str]]) -> None:
    human, judge = [h for h, _ in labelled], [j for _, j in labelled]
    result = agreement(human, judge, labels=["pass", "fail"])
    assert result.n == len(labelled) == sum(map(sum, result.matrix))
    assert result.labels[:2] == ("pass", "fail")
    same = sum(h == j for h, j in labelled)
    assert result.agreement == pytest.approx(same / len(labelled))
    for (h, j), count in _counted(labelled).items():
        assert result.matrix[result.labels.index(h)][result.labels.index(j)] == count


def _counted(labelled: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for pair in labelled:
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def test_one_label_everywhere_is_undefined_not_perfect() -> None:
    """Both raters said 'pass' every time: chance agreement is 1, kappa 0/0 (sklearn: NaN)."""
    result = agreement(["pass"] * 5, ["pass"] * 5)
    assert result.kappa is None and result.agreement == 1.0
    assert math.isnan(sklearn_kappa(["pass"] * 5, ["pass"] * 5))


def test_degenerate_but_defined_cases_match_sklearn() -> None:
    for human, judge in [
        (["pass", "pass"], ["fail", "fail"]),  # never agree, each constant: kappa 0
        (["pass", "fail"], ["pass", "fail"]),  # perfect: 1
        (["pass", "fail"], ["fail", "pass"]),  # perfectly wrong: -1
        (["pass", "pass", "fail"], ["pass", "pass", "pass"]),  # judge constant: 0
    ]:
        assert agreement(human, judge).kappa == pytest.approx(sklearn_kappa(human, judge))


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="no labelled"):
        agreement([], [])
    with pytest.raises(ValueError, match="2 human labels but 1"):
        agreement(["pass", "fail"], ["pass"])
