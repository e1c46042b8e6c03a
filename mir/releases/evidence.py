"""The canary's verdict from the two arms' counts (pure)."""

from __future__ import annotations

from pydantic import BaseModel

from mir.drift import two_proportion
from mir.releases.settings import CanarySettings

# The rates that can send a canary back: (name, ArmStats field counting the hits).
WATCHED = ("integrity_failure", "fallback", "override")


class ArmStats(BaseModel):
    """One arm's decisions of one registry model."""

    arm: str
    version: str | None
    decisions: int
    valid: int  # a valid proposal on the first model route
    integrity_failure: int
    fallback: int
    override: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    tokens_per_decision: float | None

    def rate(self, what: str) -> float | None:
        return getattr(self, what) / self.decisions if self.decisions else None


class RateTest(BaseModel):
    rate: str
    production: float | None
    canary: float | None
    z: float | None
    p_value: float | None
    worse: bool  # by more than the margin with p below the level


class CanaryComparison(BaseModel):
    name: str
    production: ArmStats
    canary: ArmStats
    tests: list[RateTest]
    enough_data: bool
    roll_back: bool

    def evidence(self) -> str:
        """One line: why the canary goes back (or not)."""
        worse = [t for t in self.tests if t.worse] or self.tests
        parts = [
            f"{t.rate} {t.canary:.3f} vs {t.production:.3f} (p={t.p_value:.2g})"
            for t in worse
            if t.canary is not None and t.production is not None and t.p_value is not None
        ]
        return (
            f"canary {self.canary.version} of {self.name} "
            f"({self.canary.decisions} decisions vs {self.production.decisions}): "
            + ("; ".join(parts) or "no data")
        )


def judge_canary(
    name: str, production: ArmStats, canary: ArmStats, settings: CanarySettings
) -> CanaryComparison:
    enough = min(production.decisions, canary.decisions) >= settings.min_samples
    tests = []
    for what in WATCHED:
        z, p = two_proportion(
            getattr(production, what), production.decisions, getattr(canary, what), canary.decisions
        )
        rp, rc = production.rate(what), canary.rate(what)
        worse = (
            enough
            and rp is not None
            and rc is not None
            and rc - rp > settings.margin
            and p == p  # not NaN
            and p < settings.p_value
        )
        tests.append(
            RateTest(
                rate=what,
                production=rp,
                canary=rc,
                z=None if z != z else z,
                p_value=None if p != p else p,
                worse=worse,
            )
        )
    return CanaryComparison(
        name=name,
        production=production,
        canary=canary,
        tests=tests,
        enough_data=enough,
        roll_back=any(t.worse for t in tests),
    )
