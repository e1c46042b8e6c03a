"""From aggregates to metric results: statistics, default or contract levels, verdicts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from mir.drift import statistics as stats
from mir.drift.domain import METRIC_KINDS, Kind, Levels, MetricResult, default_levels, judge


@dataclass
class MetricVerdicts:
    """Turns measurements into ``MetricResult``s under one agent's drift settings."""

    min_samples: int = 200
    alpha: float = 0.01
    overrides: Mapping[str, Levels] = field(default_factory=dict)

    def result(
        self,
        metric: str,
        family: str,
        *,
        kind: Kind | None = None,
        reference: float | None = None,
        current: float | None = None,
        value: float | None = None,
        p_value: float | None = None,
        n: tuple[int, int] = (0, 0),
        min_samples: int | None = None,
        detail: str = "",
        histograms: tuple[list[float], list[float]] = ([], []),
    ) -> MetricResult:
        levels = self.overrides.get(metric) or default_levels(metric, family)
        floor = self.min_samples if min_samples is None else min_samples
        enough = min(n) >= floor
        clean = _finite(value)
        return MetricResult(
            metric=metric,
            kind=kind or METRIC_KINDS.get(metric, "semantic"),
            family=family,
            reference=_finite(reference),
            current=_finite(current),
            value=clean,
            p_value=_finite(p_value),
            reference_n=n[0],
            current_n=n[1],
            warn=levels.warn,
            suspend=levels.suspend,
            verdict=judge(clean, _finite(p_value), levels, enough=enough, alpha=self.alpha),
            detail=detail,
            reference_histogram=histograms[0],
            current_histogram=histograms[1],
        )

    def categorical(
        self, prefix: str, family: str, counts: Mapping[str, Mapping[str, int]]
    ) -> list[MetricResult]:
        """JS distance and PSI of a category distribution (the action, a decision field)."""
        ref, cur = counts.get("reference", {}), counts.get("current", {})
        n = (sum(ref.values()), sum(cur.values()))
        keys = sorted(set(ref) | set(cur))
        hist = (_shares(ref, keys), _shares(cur, keys))
        worst = max(keys, key=lambda k: abs(_share(cur, k) - _share(ref, k)), default="")
        detail = f"{worst}: {_share(ref, worst):.0%} -> {_share(cur, worst):.0%}" if worst else ""
        kind = METRIC_KINDS.get(f"{prefix}.js", "semantic")
        return [
            self.result(
                f"{prefix}.js",
                f"{family}.js",
                kind=kind,
                value=stats.jensen_shannon(ref, cur) if all(n) else None,
                n=n,
                detail=detail,
                histograms=hist,
            ),
            self.result(
                f"{prefix}.psi",
                f"{family}.psi",
                kind=kind,
                value=stats.psi(ref, cur) if all(n) else None,
                n=n,
                detail=detail,
                histograms=hist,
            ),
        ]

    def numeric(self, prefix: str, family: str, measured: Mapping) -> list[MetricResult]:
        """KS (+ p), Wasserstein-1 and PSI on reference deciles of a numeric distribution."""
        n = measured["n"]
        mean_r, mean_c = measured["mean"]
        bins = measured["bins"]
        keys = [str(i) for i in range(measured["bin_count"])]
        hist = (_shares(bins["reference"], keys), _shares(bins["current"], keys))
        ks = measured["ks"]
        p = stats.ks_pvalue(ks, n[0], n[1]) if ks is not None and all(n) else None
        kind = METRIC_KINDS.get(f"{prefix}.ks", "semantic")
        common = {"kind": kind, "reference": mean_r, "current": mean_c, "n": n}
        return [
            self.result(
                f"{prefix}.ks", f"{family}.ks", value=ks, p_value=p, histograms=hist, **common
            ),
            self.result(
                f"{prefix}.wasserstein",
                f"{family}.wasserstein",
                value=measured["wasserstein"],
                **common,
            ),
            self.result(
                f"{prefix}.psi",
                f"{family}.psi",
                value=stats.psi(bins["reference"], bins["current"]) if all(n) else None,
                histograms=hist,
                **common,
            ),
        ]

    def rate(
        self, metric: str, hits: tuple[int, int, int, int], family: str = "rate"
    ) -> MetricResult:
        """A proportion in both windows: value = current - reference, p from the z-test."""
        hits_r, n_r, hits_c, n_c = hits
        rate_r = hits_r / n_r if n_r else None
        rate_c = hits_c / n_c if n_c else None
        diff = rate_c - rate_r if rate_r is not None and rate_c is not None else None
        p = stats.two_proportion(hits_r, n_r, hits_c, n_c)[1] if n_r and n_c else None
        return self.result(
            metric, family, reference=rate_r, current=rate_c, value=diff, p_value=p, n=(n_r, n_c)
        )

    def ratio(
        self, metric: str, reference: float | None, current: float | None, n: tuple[int, int]
    ) -> MetricResult:
        """A figure per decision (latency quantile, tokens, cost): value = current / reference."""
        value = current / reference if reference and current is not None else None
        return self.result(metric, metric, reference=reference, current=current, value=value, n=n)

    def change(self, what: str, new: list[str], n: tuple[int, int]) -> MetricResult:
        """New hashes in the current window: a likely cause, listed whatever the sample size."""
        return self.result(
            f"change.{what}",
            "change",
            value=float(len(new)),
            n=n,
            min_samples=1,
            detail=", ".join(new),
        )


def _share(counts: Mapping[str, int], key: str) -> float:
    total = sum(counts.values())
    return counts.get(key, 0) / total if total else 0.0


def _shares(counts: Mapping[str, int], keys: list[str]) -> list[float]:
    return [round(_share(counts, k), 6) for k in keys]


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None
