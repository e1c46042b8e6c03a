"""Calibrating the judge on labelled examples (scripted judge, real runtime): kappa,
agreement, confusion matrix, the records file, and one clear line per bad labels file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from mir.contracts import JudgeSettings
from mir.errors import ConfigError
from mir.evals.calibration import NO_VERDICT, calibrate_judge
from mir.evals.calibration_labels import read_labels
from mir.evals.calibration_records import read_calibrations
from mir.evals.judge_identity import judge_prompt_hash
from mir.evals.judging import open_judge
from mir.project import find_project

RUBRIC = "Is the reply polite and does it answer the question?"


def said(**decision: object) -> str:
    return json.dumps(json.dumps({"reason": "because", "confidence": 0.9, **decision}))


def rubric_line(label: str, reply: str = "Sorry, refund sent.") -> str:
    return json.dumps(
        {
            "input": {"message": "mug broken"},
            "decision": {"reply": reply},
            "rubric": RUBRIC,
            "label": label,
        }
    )


def pair_line(label: str) -> str:
    return json.dumps(
        {
            "input": {"message": "mug broken"},
            "a": {"reply": "Sorry!"},
            "b": {"reply": "No."},
            "criteria": "Which is kinder?",
            "label": label,
        }
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "capabilities" / "refunds" / "evals").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    return root


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rubric_calibration_prints_the_figures_and_records_them(project):
    evals = project / "capabilities" / "refunds" / "evals"
    human = ["pass", "pass", "fail", "fail", "pass", "fail"]
    judged = ["pass", "fail", "fail", "fail", "pass", "pass"]
    labels = write(evals / "labels.jsonl", *(rubric_line(h) for h in human))
    answers = write(evals / "judge.jsonl", *(said(verdict=v, score=0.5) for v in judged))
    result = calibrate_judge(labels, provider="scripted", responses=answers)
    (rubric,) = result.kinds
    assert rubric.kind == "rubric" and rubric.agreement.n == 6
    assert rubric.agreement.labels == ("pass", "fail")
    assert rubric.agreement.matrix == ((2, 1), (1, 2))
    assert rubric.agreement.agreement == pytest.approx(4 / 6)
    assert rubric.agreement.kappa == pytest.approx(cohen_kappa_score(human, judged))
    assert [e.line for e in rubric.examples] == [1, 2, 3, 4, 5, 6]

    (saved,) = read_calibrations(evals / "judge-calibration.json")
    assert (saved.judge_model, saved.prompt_hash) == ("scripted", judge_prompt_hash())
    assert saved.kappa == pytest.approx(1 / 3) and saved.n == 6 and saved.labels == "labels.jsonl"
    assert saved.confusion is not None and saved.confusion.matrix == [[2, 1], [1, 2]]

    # newest last: a second run appends; --no-record leaves the file alone
    write(answers, *(said(verdict=v, score=0.5) for v in human))
    calibrate_judge(labels, provider="scripted", responses=answers)
    calibrate_judge(labels, provider="scripted", responses=answers, record=False)
    assert [r.kappa for r in read_calibrations(evals / "judge-calibration.json")] == [
        pytest.approx(1 / 3),
        1.0,
    ]


def test_a_calibration_makes_the_judge_gate(project):
    evals = project / "capabilities" / "refunds" / "evals"
    labels = write(evals / "labels.jsonl", *(rubric_line(h) for h in ["pass", "fail"] * 3))
    answers = write(
        evals / "judge.jsonl", *(said(verdict=v, score=0.5) for v in ["pass", "fail"] * 3)
    )
    settings = JudgeSettings(provider="scripted", responses="judge.jsonl", min_kappa=0.6)
    with open_judge(settings, suite_dir=evals, project=find_project(project)) as judge:
        assert judge.gating()[0] is False
    calibrate_judge(labels, provider="scripted", responses=answers)
    with open_judge(settings, suite_dir=evals, project=find_project(project)) as judge:
        assert judge.gating() == (True, None)


def test_pairwise_labels_use_the_swap_and_report_position_consistency(project):
    evals = project / "capabilities" / "refunds" / "evals"
    labels = write(
        evals / "labels.jsonl",
        pair_line("A"),
        pair_line("A"),
        pair_line("tie"),
        rubric_line("pass"),
    )
    # line 1: consistent A; line 2: always "A" (a flip: tie); line 3: consistent tie
    answers = write(
        evals / "judge.jsonl",
        said(verdict="A"),
        said(verdict="B"),
        said(verdict="A"),
        said(verdict="A"),
        said(verdict="tie"),
        said(verdict="tie"),
        said(verdict="pass", score=0.9),
    )
    result = calibrate_judge(labels, provider="scripted", responses=answers)
    kinds = {k.kind: k for k in result.kinds}
    pairwise = kinds["pairwise"]
    assert [e.verdict for e in pairwise.examples] == ["A", "tie", "tie"]
    assert pairwise.position_consistency == pytest.approx(2 / 3)
    assert pairwise.agreement.labels == ("A", "B", "tie")
    assert pairwise.agreement.agreement == pytest.approx(2 / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = cohen_kappa_score(["A", "A", "tie"], ["A", "tie", "tie"])
    assert pairwise.agreement.kappa == pytest.approx(reference)
    assert kinds["rubric"].agreement.kappa is None  # one label only: undefined
    kinds_saved = [r.kind for r in read_calibrations(evals / "judge-calibration.json")]
    assert kinds_saved == ["rubric", "pairwise"]


def test_an_unanswered_example_counts_as_a_disagreement(project):
    evals = project / "capabilities" / "refunds" / "evals"
    labels = write(evals / "labels.jsonl", rubric_line("pass"), rubric_line("fail"))
    answers = write(evals / "judge.jsonl", said(verdict="pass", score=1), '"x"', '"y"', '"z"')
    (rubric,) = calibrate_judge(labels, provider="scripted", responses=answers, record=False).kinds
    assert [e.verdict for e in rubric.examples] == ["pass", NO_VERDICT]
    assert rubric.agreement.labels == ("pass", "fail", NO_VERDICT)
    assert rubric.agreement.agreement == 0.5


def test_the_suite_names_the_judge(project):
    evals = project / "capabilities" / "refunds" / "evals"
    labels = write(evals / "labels.jsonl", rubric_line("pass"), rubric_line("fail"))
    write(evals / "judge.jsonl", said(verdict="pass", score=1), said(verdict="fail", score=0))
    suite = evals / "triage.yaml"
    suite.write_text(
        "agent: triage\njudge: {provider: scripted, responses: judge.jsonl}\ncases: []\n"
    )
    (rubric,) = calibrate_judge(labels, suite=suite, record=False).kinds
    assert rubric.agreement.kappa == 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "labels file not found"),
        ("", "labels file has no examples"),
        (rubric_line("pass") + "\n{oops", ":2: not JSON: Expecting property name"),
        ("[1]", ":1: a line must be a JSON object"),
        (
            rubric_line("maybe"),
            "label: Input should be 'pass' or 'fail' (label is one of pass | fail)",
        ),
        (pair_line("C"), "label is one of A | B | tie"),
        (json.dumps({"input": {}, "rubric": "r", "label": "pass"}), ":1: decision: Field required"),
        (
            json.dumps({"input": {}, "decision": 1, "rubric": "r", "label": "pass", "x": 1}),
            "x: Extra",
        ),
    ],
)
def test_a_bad_labels_file_is_one_clear_config_error(tmp_path, content, message):
    path = tmp_path / "labels.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as caught:
        read_labels(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)
