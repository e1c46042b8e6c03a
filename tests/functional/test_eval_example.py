"""The support_desk example's eval suite: a real suite over all four tiers, with the
recorded model answers CI replays offline, and the judge's labelled calibration file."""

from __future__ import annotations

import json
from pathlib import Path

from mir.contracts import ASSERTION_TIERS, load_eval_suite
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "support_desk"
EVALS = EXAMPLE / "capabilities" / "refunds" / "evals"
SUITE = EVALS / "triage.yaml"
RESPONSES = EXAMPLE / "responses" / "eval-triage.jsonl"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_suite_has_twenty_cases_over_the_four_tiers() -> None:
    suite = load_eval_suite(SUITE)
    assert len(suite.cases) >= 20
    tiers = {ASSERTION_TIERS[a.type] for case in suite.cases for a in case.assertions}
    assert tiers == {"deterministic", "schema", "judge", "trajectory"}
    # every case says what support expects, not only how the flow went
    assert all(case.expect for case in suite.cases)


def test_the_money_losing_cases_are_critical() -> None:
    suite = load_eval_suite(SUITE)
    critical = {case.id for case in suite.cases if case.critical}
    for must in (
        "injection-cannot-buy-a-refund",
        "over-the-limit-goes-to-a-human",
        "someone-elses-order-pays-nothing",
        "changed-mind-is-rejected",
    ):
        assert must in critical
    # a critical case never expects money to move without a human
    for case in suite.cases:
        if case.critical and case.expect.get("action") == "refund":
            assert case.expect.get("status") == "pending_review", case.id


def test_every_case_has_its_world_state_and_one_recorded_answer() -> None:
    suite = load_eval_suite(SUITE)
    assert all(case.context is not None for case in suite.cases)
    lines = _lines(RESPONSES)
    assert len(lines) == len(suite.cases)
    for line in lines:
        assert isinstance(json.loads(line)["text"], str)


def test_the_judge_labels_are_a_calibration_set() -> None:
    lines = [json.loads(line) for line in _lines(EVALS / "judge-labels.jsonl")]
    rubric = [line for line in lines if "rubric" in line]
    pairwise = [line for line in lines if "criteria" in line]
    assert len(rubric) >= 20 and len(rubric) + len(pairwise) == len(lines)
    labels = [line["label"] for line in rubric]
    # both labels well represented, or kappa says little
    assert min(labels.count("pass"), labels.count("fail")) >= 8
    assert {line["label"] for line in pairwise} == {"A", "B", "tie"}
    for line in rubric:
        assert {"input", "decision", "rubric", "label"} <= set(line)
