"""releases: a model version's way to production — the promotion gate (evals), and its
evidence against production (compare, canary rollback)."""

from mir.releases.arms import compare_arms
from mir.releases.compare import ModelComparison, compare_model
from mir.releases.evidence import ArmStats, CanaryComparison, judge_canary
from mir.releases.gate import Promotion, agents_using, promote
from mir.releases.rollback import CanaryCheck, CanaryWatch, Rollback, check_canaries
from mir.releases.settings import CanarySettings
from mir.releases.shadow import ShadowComparison, ShadowSide
from mir.releases.watching import watch_with_canaries

__all__ = [
    "ArmStats",
    "CanaryCheck",
    "CanaryComparison",
    "CanarySettings",
    "CanaryWatch",
    "ModelComparison",
    "Promotion",
    "Rollback",
    "ShadowComparison",
    "ShadowSide",
    "agents_using",
    "check_canaries",
    "compare_arms",
    "compare_model",
    "judge_canary",
    "promote",
    "watch_with_canaries",
]
