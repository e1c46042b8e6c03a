"""How a release reads: a promotion's outcome and a rollback check, line by line."""

from __future__ import annotations

from types import SimpleNamespace

from mir.models import ModelEntry
from mir.releases import (
    ArmStats,
    CanaryCheck,
    CanaryComparison,
    Promotion,
    Rollback,
    check_lines,
    promotion_lines,
)

ENTRY = ModelEntry(name="qwen", version="2", stage="production", artifact="m.gguf")
FAILED = SimpleNamespace(exit_code=1)
PASSED = SimpleNamespace(exit_code=0)


def test_a_refused_promotion_says_why_and_that_force_would_promote() -> None:
    failed = promotion_lines(Promotion(entry=None, report=FAILED), "qwen", "2", False)
    assert failed == [
        "not promoted: the eval gate failed for qwen@2",
        "(--force promotes anyway; the history will say so)",
    ]
    replayed = promotion_lines(Promotion(entry=None, replayed=True), "qwen", "2", False)
    assert replayed[0] == (
        "not promoted: the gate replayed recorded answers (--responses), not answers of qwen@2"
    )


def test_a_promotion_says_the_new_stage_and_when_it_was_forced() -> None:
    assert promotion_lines(Promotion(entry=ENTRY, report=PASSED), "qwen", "2", True) == [
        "qwen@2 is now production"
    ]
    past = promotion_lines(Promotion(entry=ENTRY, report=FAILED), "qwen", "2", True)
    assert past == ["qwen@2 is now production (forced past a failed gate)"]
    replay = promotion_lines(Promotion(entry=ENTRY, replayed=True), "qwen", "2", True)
    assert replay == ["qwen@2 is now production (forced on a replayed gate)"]


def _arm(arm: str, decisions: int) -> ArmStats:
    return ArmStats(
        arm=arm,
        version="1" if arm == "production" else "2",
        decisions=decisions,
        valid=decisions,
        integrity_failure=0,
        fallback=0,
        override=0,
        latency_p50_ms=None,
        latency_p95_ms=None,
        tokens_per_decision=None,
    )


def _comparison(name: str, enough: bool, worse: bool) -> CanaryComparison:
    return CanaryComparison(
        name=name,
        production=_arm("production", 100),
        canary=_arm("canary", 50 if enough else 3),
        tests=[],
        enough_data=enough,
        roll_back=worse,
    )


def test_a_check_says_which_canary_went_back_and_which_stayed() -> None:
    worse = _comparison("qwen", True, True)
    young = _comparison("llama", False, False)
    result = CanaryCheck(
        comparisons=[worse, young],
        rolled_back=[Rollback(name="qwen", version="2", why="worse", comparison=worse)],
        notes=["a note"],
    )
    lines = check_lines(result)
    assert lines[0] == "a note"
    assert lines[1].startswith("qwen: rolled back to shadow: canary 2 of qwen (50 decisions")
    assert lines[2].startswith("llama: kept (not enough decisions yet): canary 2 of llama")
    assert check_lines(CanaryCheck(comparisons=[], rolled_back=[], notes=[])) == [
        "no canary to check"
    ]
