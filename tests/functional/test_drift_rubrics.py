"""Rubric drift through the real `mir drift` CLI: a scripted judge whose scores drop in
the current window trips `rubric:<name>` (semantic), the row is stored like every
metric, the judge's own flows never count as production decisions, and without
`--rubrics` the rubric is listed as not run. A rubric path the decision does not have
is a config error at its line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
WEEK4 = ("--window", "7d", "--reference", "21d")
SAMPLE = 40
CONTRACT = "capabilities/refunds/agents/triage.yaml"


def said(score: float) -> str:
    verdict = "pass" if score >= 0.5 else "fail"
    raw = json.dumps({"reason": "r", "verdict": verdict, "score": score, "confidence": 1})
    return json.dumps(raw)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    script = root / "scripts" / "drift_month.py"
    done = subprocess.run(
        [sys.executable, str(script), "--project", str(root), "--per-day", "60"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root


def calibrate(root: Path, kappa: float | None) -> None:
    """A calibration record of the scripted judge beside the contract (None: none at all)."""
    from mir.evals.judge_identity import judge_prompt_hash

    records = (root / CONTRACT).parent / "judge-calibration.json"
    if kappa is None:
        records.unlink(missing_ok=True)
        return
    record = {
        "judge_model": "scripted",
        "prompt_hash": judge_prompt_hash(),
        "kind": "rubric",
        "kappa": kappa,
        "agreement": 0.9,
        "n": 60,
        "labels": "labels.jsonl",
        "at": "2026-11-30T12:00:00Z",
    }
    records.write_text(json.dumps([record]))


def add_rubric(
    root: Path,
    scores: list[float],
    path: str = "reason",
    min_samples: int = 200,
    *,
    kappa: float | None = 0.8,
    min_kappa: float | None = None,
) -> int:
    """A rubric on the (example's) triage contract, its judge scripted and calibrated to
    ``kappa``; returns the path's line."""
    contract = root / CONTRACT
    calibrate(root, kappa)
    (contract.parent / "judge.jsonl").write_text("".join(said(s) + "\n" for s in scores))
    gate = "" if min_kappa is None else f", min_kappa: {min_kappa}"
    text = (EXAMPLE / CONTRACT).read_text()
    contract.write_text(
        text
        + "drift:\n"
        + f"  min_samples: {min_samples}\n"
        + "  rubrics:\n"
        + "    - name: reason_fits\n"
        + "      rubric: The reason names the customer's actual problem.\n"
        + f"      path: {path}\n"
        + f"      sample: {SAMPLE}\n"
        + "      judge: {provider: scripted, responses: judge.jsonl"
        + gate
        + "}\n"
    )
    return len(text.splitlines()) + 6


def rubric_of(report: dict) -> dict:
    [agent] = report["agents"]
    [metric] = [m for m in agent["metrics"] if m["metric"] == "rubric:reason_fits"]
    return metric


def test_a_drop_in_judge_scores_trips_the_rubric_metric(run_mir, desk: Path):
    # the reference sample is graded first, then the current one (the judge replays in order)
    add_rubric(desk, [0.9] * SAMPLE + [0.3] * SAMPLE)
    result = run_mir("drift", "triage", *WEEK4, "--rubrics", "--format", "json", cwd=desk)
    assert result.returncode == 1, result.stderr
    metric = rubric_of(json.loads(result.stdout))
    assert metric["kind"] == "semantic" and metric["verdict"] == "suspend"
    assert (metric["reference_n"], metric["current_n"]) == (SAMPLE, SAMPLE)
    assert metric["reference"] == pytest.approx(0.9) and metric["current"] == pytest.approx(0.3)
    assert metric["value"] == pytest.approx(0.6) and metric["p_value"] < 1e-6
    stored = run_mir(
        "drift", "history", "triage", "rubric:reason_fits", "--format", "json", cwd=desk
    )
    [point] = json.loads(stored.stdout)
    assert point["verdict"] == "suspend" and point["value"] == pytest.approx(0.6)
    # the judge's 80 flows are eval flows: no agent of their own, no extra decisions
    plain = run_mir("drift", *WEEK4, "--format", "json", cwd=desk)
    agents = json.loads(plain.stdout)["agents"]
    assert [a["agent"] for a in agents] == ["refunds.triage"]
    assert (agents[0]["reference"]["decisions"], agents[0]["current"]["decisions"]) == (1260, 420)


def test_steady_scores_stay_ok_and_the_breaker_trips_on_a_drop(run_mir, desk: Path):
    add_rubric(desk, [0.8, 0.9] * SAMPLE)
    result = run_mir("drift", "triage", *WEEK4, "--rubrics", "--format", "json", cwd=desk)
    assert rubric_of(json.loads(result.stdout))["verdict"] == "ok"
    # only the rubric may suspend: every other metric lacks samples (its own floor is 30)
    add_rubric(desk, [0.9] * SAMPLE + [0.2] * SAMPLE, min_samples=100_000)
    check = run_mir("drift", "check", "triage", *WEEK4, "--rubrics", cwd=desk)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "SUSPENDED by the breaker" in check.stdout
    state = (desk / ".mir" / "agents.json").read_text()
    assert "drift: rubric:reason_fits = 0.7" in state


def test_without_rubrics_flag_the_rubric_is_listed_as_not_run(run_mir, desk: Path):
    add_rubric(desk, [])  # no judge answers: nothing may be graded
    result = run_mir("drift", *WEEK4, cwd=desk)
    assert "rubric:reason_fits: not run (pass --rubrics)" in result.stdout
    as_json = run_mir("drift", *WEEK4, "--format", "json", cwd=desk)
    metric = rubric_of(json.loads(as_json.stdout))
    assert metric["verdict"] == "info" and metric["current_n"] == 0


def test_an_unknown_rubric_path_is_a_config_error_at_its_line(run_mir, desk: Path):
    line = add_rubric(desk, [0.9] * 2 * SAMPLE, path="reazon")
    result = run_mir("drift", *WEEK4, "--rubrics", cwd=desk)
    assert result.returncode == 2, result.stdout
    [error] = result.stderr.strip().splitlines()
    assert f"triage.yaml:{line}" in error and "'reazon' is not a field of the decision" in error


def test_the_watch_loop_grades_rubrics_too(run_mir, desk: Path):
    add_rubric(desk, [0.9] * SAMPLE + [0.2] * SAMPLE, min_samples=100_000)
    args = ("drift", "watch", "--every", "1s", "--iterations", "1", *WEEK4, "--rubrics")
    result = run_mir(*args, cwd=desk)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "suspend: rubric:reason_fits = 0.7" in result.stdout


@pytest.mark.parametrize(
    ("kappa", "min_kappa", "why"),
    [
        (None, None, "judge not calibrated: no calibration of model scripted"),
        (-0.36, 0.4, "judge not calibrated: rubric kappa -0.36 < min_kappa 0.4"),
    ],
    ids=["never-calibrated", "kappa-below-min"],
)
def test_an_uncalibrated_judge_reports_but_never_suspends(
    run_mir, desk: Path, kappa, min_kappa, why
):
    """Rubric drift suspended an agent on the word of a judge never calibrated, or whose
    last calibration (kappa -0.36) was below min_kappa: it reports, and says why."""
    add_rubric(
        desk, [0.9] * SAMPLE + [0.2] * SAMPLE, min_samples=100_000, kappa=kappa,
        min_kappa=min_kappa,
    )  # fmt: skip
    check = run_mir("drift", "check", "triage", *WEEK4, "--rubrics", "--format", "json", cwd=desk)
    assert check.returncode == 0, check.stdout + check.stderr
    assert (
        not (desk / ".mir" / "agents.json").exists()
        or "suspended" not in (desk / ".mir" / "agents.json").read_text()
    )
    report = json.loads(check.stdout)
    metric = rubric_of(report)
    assert metric["verdict"] == "warn" and metric["value"] == pytest.approx(0.7)
    assert why in metric["detail"]
    assert any("does not suspend" in note and why in note for note in report["notes"])
    # calibrated to the bar: the same drop suspends
    calibrate(desk, 0.5 if min_kappa else 0.1)
    again = run_mir("drift", "check", "triage", *WEEK4, "--rubrics", cwd=desk)
    assert again.returncode == 1 and "SUSPENDED by the breaker" in again.stdout
