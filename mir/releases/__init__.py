"""releases: a new model version's evidence against production (compare, canary rollback)."""

from mir.releases.arms import compare_arms
from mir.releases.compare import ModelComparison, compare_model
from mir.releases.evidence import ArmStats, CanaryComparison, judge_canary
from mir.releases.rollback import CanaryCheck, CanaryWatch, Rollback, check_canaries
from mir.releases.settings import CanarySettings
from mir.releases.shadow import ShadowComparison, ShadowSide

__all__ = [
    "ArmStats",
    "CanaryCheck",
    "CanaryComparison",
    "CanarySettings",
    "CanaryWatch",
    "ModelComparison",
    "Rollback",
    "ShadowComparison",
    "ShadowSide",
    "check_canaries",
    "compare_arms",
    "compare_model",
    "judge_canary",
]
