"""releases: a new model version's evidence against production (compare, canary rollback)."""

from mir.releases.arms import compare_arms
from mir.releases.evidence import ArmStats, CanaryComparison, judge_canary
from mir.releases.rollback import CanaryCheck, CanaryWatch, Rollback, check_canaries
from mir.releases.settings import CanarySettings

__all__ = [
    "ArmStats",
    "CanaryCheck",
    "CanaryComparison",
    "CanarySettings",
    "CanaryWatch",
    "Rollback",
    "check_canaries",
    "compare_arms",
    "judge_canary",
]
