"""Agreement between two raters (a human and the judge): Cohen's kappa, raw agreement
and the confusion matrix. Standard library only.

Cohen's kappa is ``(p_o - p_e) / (1 - p_e)``: observed agreement ``p_o`` corrected for
the agreement ``p_e`` two raters with these label frequencies would reach by chance. It
is computed on integer counts (exact up to the final division), over the labels either
rater used, and equals ``sklearn.metrics.cohen_kappa_score`` (tests/unit/evals/
test_kappa.py checks it on random inputs).

When both raters used one and the same label for every example, ``p_e`` is 1 and kappa
is 0/0: undefined. sklearn returns NaN (with a warning); here it is ``None``, so a
calibration on labels without variety can never pass a ``min_kappa`` gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Agreement:
    """How far the judge agrees with the human labels."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]  # matrix[i][j]: human said labels[i], judge labels[j]
    n: int
    agreement: float  # raw agreement p_o: share of examples where both said the same
    kappa: float | None  # Cohen's kappa; None when undefined (p_e = 1)


def agreement(human: Sequence[str], judge: Sequence[str], labels: Sequence[str] = ()) -> Agreement:
    """Cohen's kappa of ``judge`` against ``human`` (paired, same length, at least one).

    ``labels`` orders the matrix (labels nobody used still get a row and a column); the
    labels either rater used that it does not name follow, sorted.
    """
    if len(human) != len(judge):
        raise ValueError(f"{len(human)} human labels but {len(judge)} judge labels")
    if not human:
        raise ValueError("no labelled examples")
    used = set(human) | set(judge)
    order = tuple(dict.fromkeys([*labels, *sorted(used - set(labels))]))
    index = {label: i for i, label in enumerate(order)}
    counts = [[0] * len(order) for _ in order]
    for h, j in zip(human, judge, strict=True):
        counts[index[h]][index[j]] += 1
    n = len(human)
    observed = sum(counts[i][i] for i in range(len(order)))
    rows = [sum(row) for row in counts]
    columns = [sum(row[i] for row in counts) for i in range(len(order))]
    # p_o = observed / n and p_e = chance / n**2; kappa = (n*observed - chance) / (n**2 - chance)
    chance = sum(r * c for r, c in zip(rows, columns, strict=True))
    kappa = None if chance == n * n else float(Fraction(n * observed - chance, n * n - chance))
    return Agreement(
        labels=order,
        matrix=tuple(tuple(row) for row in counts),
        n=n,
        agreement=observed / n,
        kappa=kappa,
    )
