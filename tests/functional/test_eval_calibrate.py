"""``mir eval calibrate LABELS.jsonl``: the judge against human labels, printed and recorded.

The command is registered on ``mir eval`` (e1's group) by ``eval_calibrate.register``;
until that group is on this branch, the real-CLI tests are skipped and the command is
exercised through typer on a group of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from mir.cli import eval_calibrate
from mir.evals.calibration_records import read_calibrations

HUMAN = ["pass", "pass", "fail", "fail", "pass", "fail", "pass", "fail"]
JUDGE = ["pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail"]


def said(verdict: str) -> str:
    return json.dumps(
        json.dumps({"reason": "r", "verdict": verdict, "score": 0.5, "confidence": 1})
    )


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    lines = [
        {
            "input": {"message": f"ticket {i}"},
            "decision": {"reply": "ok"},
            "rubric": "Polite?",
            "label": h,
        }
        for i, h in enumerate(HUMAN)
    ]
    (evals / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (evals / "judge.jsonl").write_text("".join(said(v) + "\n" for v in JUDGE))
    return evals


def kappa_of(matrix: list[list[int]], labels: list[str]) -> float:
    """sklearn's kappa on the pairs the printed matrix counts."""
    human, judge = [], []
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            human += [labels[i]] * count
            judge += [labels[j]] * count
    return float(cohen_kappa_score(human, judge))


def calibrate_app() -> typer.Typer:
    """``eval calibrate`` on a group of its own, as ``mir eval`` registers it."""
    app, group = typer.Typer(), typer.Typer()
    eval_calibrate.register(group)
    app.add_typer(group, name="eval")
    return app


def test_the_command_prints_kappa_agreement_and_the_matrix(labelled: Path):
    app = calibrate_app()
    args = ["eval", "calibrate", str(labelled / "labels.jsonl"), "--judge-provider", "scripted"]
    args += ["--judge-responses", str(labelled / "judge.jsonl")]
    result = CliRunner().invoke(app, [*args, "--json"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    (rubric,) = report["kinds"]
    assert rubric["kappa"] == pytest.approx(kappa_of(rubric["matrix"], rubric["labels"]))
    assert rubric["matrix"] == [[3, 1], [1, 3]] and rubric["n"] == 8
    assert report["records_file"] == str(labelled / "judge-calibration.json")

    text = CliRunner().invoke(app, [*args, "--no-record"], env={"COLUMNS": "100"})
    assert text.exit_code == 0, text.output
    assert "rubric: n 8, Cohen's kappa 0.500, raw agreement 0.750" in text.output
    rows = [
        line.split() for line in text.output.splitlines() if re.match(r"\s*(pass|fail)\s+\d", line)
    ]
    assert rows == [["pass", "3", "1"], ["fail", "1", "3"]]
    assert len(read_calibrations(labelled / "judge-calibration.json")) == 1


def test_mir_eval_calibrate_records_the_judge(run_mir, labelled: Path):
    result = run_mir(
        "eval",
        "calibrate",
        "labels.jsonl",
        "--judge-provider",
        "scripted",
        "--judge-responses",
        "judge.jsonl",
        cwd=labelled,
    )
    assert result.returncode == 0, result.stderr
    assert "Cohen's kappa 0.500" in result.stdout
    (saved,) = read_calibrations(labelled / "judge-calibration.json")
    assert saved.judge_model == "scripted" and saved.kappa == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("missing.jsonl", "missing.jsonl: labels file not found"),
        ("bad.jsonl", "bad.jsonl:1: label: Input should be 'pass' or 'fail'"),
    ],
)
def test_a_bad_labels_file_is_one_line_exit_2(run_mir, labelled: Path, labels: str, message: str):
    (labelled / "bad.jsonl").write_text(
        '{"input": {}, "decision": 1, "rubric": "r", "label": "ok"}\n'
    )
    result = run_mir("eval", "calibrate", labels, "--judge-provider", "scripted", cwd=labelled)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_judge_provider_is_exit_2(run_mir, labelled: Path):
    result = run_mir("eval", "calibrate", "labels.jsonl", "--judge-provider", "rules", cwd=labelled)
    assert result.returncode == 2 and "not a judge provider" in result.stderr


def test_a_judge_that_always_prefers_the_first_answer_is_shown_up(labelled: Path):
    """Pairwise labels against a scripted judge that always says "A": every verdict flips
    with the positions, so each is a tie and the position consistency is 0."""
    pairs = [
        {
            "input": {"q": i},
            "a": {"r": "kind"},
            "b": {"r": "rude"},
            "criteria": "kinder?",
            "label": x,
        }
        for i, x in enumerate(["A", "B", "A", "B"])
    ]
    (labelled / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    always_a = json.dumps(json.dumps({"reason": "first", "verdict": "A", "confidence": 1}))
    (labelled / "always-a.jsonl").write_text((always_a + "\n") * 8)
    app = calibrate_app()
    args = ["eval", "calibrate", str(labelled / "pairs.jsonl"), "--judge-provider", "scripted"]
    args += ["--judge-responses", str(labelled / "always-a.jsonl"), "--no-record"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "pairwise: n 4, Cohen's kappa 0.000, raw agreement 0.000" in result.output
    assert "position consistency 0.000" in result.output


def test_judge_responses_that_run_out_are_refused_before_any_verdict(run_mir, labelled: Path):
    # 3 verdicts for 8 labels: it printed a kappa from 3 verdicts, exited 0 and recorded it
    (labelled / "short.jsonl").write_text("".join(said(v) + "\n" for v in JUDGE[:3]))
    result = run_mir(
        "eval", "calibrate", "labels.jsonl", "--judge-responses", "short.jsonl", cwd=labelled
    )
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "has 3 line(s)" in line and "need 8" in line and "Traceback" not in line
    assert "kappa" not in result.stdout
    assert not (labelled / "judge-calibration.json").exists()
