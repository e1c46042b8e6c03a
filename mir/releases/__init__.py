"""releases: a model version's way to production — the promotion gate (evals), and its
evidence against production (compare, canary rollback)."""

from mir.releases.arms import compare_arms
from mir.releases.compare import ModelComparison, compare_model
from mir.releases.evidence import ArmStats, CanaryComparison, judge_canary
from mir.releases.gate import Promotion, agents_using, promote
from mir.releases.promoting import promote_to
from mir.releases.reading import (
    Listing,
    canary_verdict,
    check_lines,
    comparison_tables,
    promotion_lines,
)
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
    "Listing",
    "ModelComparison",
    "Promotion",
    "Rollback",
    "ShadowComparison",
    "ShadowSide",
    "agents_using",
    "canary_verdict",
    "check_canaries",
    "check_lines",
    "compare_arms",
    "compare_model",
    "comparison_tables",
    "judge_canary",
    "promote",
    "promote_to",
    "promotion_lines",
    "watch_with_canaries",
]
