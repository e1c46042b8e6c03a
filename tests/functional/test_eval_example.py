"""The support_desk example's eval suite: a real suite over all four tiers, with the
recorded model answers CI replays offline, and the judge's labelled calibration file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.contracts import ASSERTION_TIERS, load_eval_suite
from tests.conftest import REPO, RunMir

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


# --- the suite through the real `mir eval`, replayed from the recorded answers ----------

PROMPT_EDIT_BROKE = {
    "expensive-refund-waits-for-a-human",
    "expensive-wrong-item-waits-for-a-human",
    "late-parcel-over-100-waits-for-a-human",
}


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    copy = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return copy


def _report(run_mir: RunMir, desk: Path, responses: str) -> tuple[int, dict]:
    ran = run_mir(
        "eval", "refunds.triage", "--responses", responses, "--format", "json", "-q", cwd=desk
    )
    assert ran.returncode in (0, 1), ran.stderr
    return ran.returncode, json.loads(ran.stdout)["suites"][0]


def test_the_recorded_answers_pass_against_the_committed_baseline(
    run_mir: RunMir, desk: Path
) -> None:
    code, suite = _report(run_mir, desk, "responses/eval-triage.jsonl")
    assert code == 0, suite["gate"]
    assert all(run["passed"] for run in suite["runs"])
    assert len(suite["runs"]) == len(load_eval_suite(SUITE).cases)
    assert suite["comparison"]["broken"] == [] and suite["comparison"]["fixed"] == []
    # an eval never executes: no execution ledger, no support ledger entry
    assert not (desk / ".mir" / "executions.db").exists()
    assert not (desk / ".mir" / "support_ledger.sqlite3").exists()


# The example's review rule (`review.when: expensive_refund`) and the planted contract
# edit that weakens it (the examples/demo.py step and the README's).
RULE_LIMIT = '{field: decision.amount, op: ">", value: 100}'


def test_the_planted_prompt_edit_cannot_pay_an_expensive_refund(run_mir: RunMir, desk: Path):
    """After the prompt edit the model reports 1.0 on the three expensive refunds; the
    contract's rule, not the number, still sends them to a human."""
    code, suite = _report(run_mir, desk, "responses/eval-prompt-edit.jsonl")
    assert code == 0, suite["gate"]
    expensive = [run for run in suite["runs"] if run["case_id"] in PROMPT_EDIT_BROKE]
    assert len(expensive) == 3 and all(run["passed"] for run in expensive)
    assert suite["comparison"]["broken"] == []


def test_the_planted_contract_edit_fails_on_its_critical_case(run_mir: RunMir, desk: Path):
    contract = desk / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text()
    assert RULE_LIMIT in text
    contract.write_text(text.replace(RULE_LIMIT, RULE_LIMIT.replace("100", "500")))
    ran = run_mir("eval", "refunds.triage", "--responses", "responses/eval-prompt-edit.jsonl",
                  "-q", cwd=desk)  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    for case in PROMPT_EDIT_BROKE:
        assert case in ran.stdout
    assert "critical" in ran.stdout
    _, suite = _report(run_mir, desk, "responses/eval-prompt-edit.jsonl")
    assert set(suite["comparison"]["broken"]) == PROMPT_EDIT_BROKE
    assert not suite["gate"]["passed"]


def test_calibration_on_the_example_labels_prints_the_readme_kappa(
    run_mir: RunMir, desk: Path, tmp_path: Path
) -> None:
    """Replays what the embedded SmolLM2 judge answered when the README's figures were
    taken: verdict `pass` on every rubric line with these scores (a pass needs score >=
    0.5 too), position A for every pairwise question."""
    labels = [json.loads(line) for line in _lines(EVALS / "judge-labels.jsonl")]
    scores = [0, 0, 0.5, 1, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 1, 0, 0, 0.6, 0.5, 0.5, 1,
              0.5, 0]  # fmt: skip
    grades = [
        json.dumps({"reason": "meets it", "verdict": "pass", "score": score, "confidence": 1})
        for score in scores
    ]
    prefer_a = json.dumps({"reason": "A is better", "verdict": "A", "confidence": 1})
    rubric_lines = sum("rubric" in line for line in labels)
    pairwise_lines = len(labels) - rubric_lines  # after the rubric lines; each asked twice
    assert rubric_lines == len(scores)
    replies = [json.dumps(g) for g in grades] + [json.dumps(prefer_a)] * 2 * pairwise_lines
    script = tmp_path / "smollm2-judge.jsonl"
    script.write_text("\n".join(replies) + "\n")
    ran = run_mir(
        "eval", "calibrate", "capabilities/refunds/evals/judge-labels.jsonl",
        "--judge-provider", "scripted", "--judge-responses", str(script), "--no-record",
        "--json", cwd=desk,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    kinds = {kind["kind"]: kind for kind in json.loads(ran.stdout)["kinds"]}
    rubric, pairwise = kinds["rubric"], kinds["pairwise"]
    assert rubric["n"] == 26
    assert rubric["kappa"] == pytest.approx(-0.360, abs=5e-4)
    assert rubric["agreement"] == pytest.approx(8 / 26)
    assert (pairwise["n"], pairwise["kappa"], pairwise["position_consistency"]) == (6, 0.0, 0.0)
    ran = run_mir(
        "eval", "calibrate", "capabilities/refunds/evals/judge-labels.jsonl",
        "--judge-provider", "scripted", "--judge-responses", str(script), "--no-record",
        cwd=desk,
    )  # fmt: skip
    assert "kappa -0.360" in ran.stdout


def test_a_replayed_run_says_in_one_short_line_why_the_judge_does_not_gate(run_mir, tmp_path):
    # every replayed run printed two long judge lines (position consistency, then the
    # whole calibration path and how to calibrate)
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir"))
    args = ("eval", "refunds.triage", "--responses", "responses/eval-triage.jsonl", "-q")
    short = run_mir(*args, cwd=root, env={"COLUMNS": "120"})
    assert short.returncode == 0, short.stdout + short.stderr
    judge = [line for line in short.stdout.splitlines() if "judge" in line]
    assert judge == [
        "  judge: position consistency 67%; reported, not gating (not calibrated; -v says why)"
    ]
    full = run_mir(*args, "-v", cwd=root, env={"COLUMNS": "120"})
    assert "judge-calibration.json" in full.stdout and "mir eval calibrate" in full.stdout
