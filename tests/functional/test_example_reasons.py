"""The support_desk example's recorded model answers end their reasons on their own.

llama.cpp's JSON-schema grammar closes a string AT its ``maxLength``: with ``reason``
bounded at 40 characters the embedded model's reasons stopped mid-word ("...checked by
a H"), whatever ``max_tokens`` allowed. The prompt now gives the model one short
sentence to restate and the bound is well past it; a reason that reaches the bound, or
stops on a space or an apostrophe, was cut, not ended."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mir.contracts import load_contract
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "support_desk"
RECORDED = sorted((EXAMPLE / "responses").glob("*.jsonl"))
# a sentence's last character: a word's, or punctuation that closes one
ENDED = re.compile(r"[\w.!?)\]\"]\Z")


def _decision_schema() -> dict:
    code = (
        "import json\nfrom capabilities.refunds.domain import TriageDecision as D\n"
        "print(json.dumps(D.model_json_schema()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=EXAMPLE, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def _answers(path: Path) -> list[tuple[int, dict, dict]]:
    """(line number, recorded line, the decision it holds) for each decision line."""
    out = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        line = json.loads(text)
        raw = line["text"] if isinstance(line, dict) else line
        try:
            decision = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a case refused before any model call, or a planted bad answer
        if isinstance(decision, dict) and isinstance(decision.get("reason"), str):
            out.append((number, line if isinstance(line, dict) else {}, decision))
    return out


@pytest.fixture(scope="module")
def bound() -> int:
    reason = _decision_schema()["properties"]["reason"]
    return int(reason["maxLength"])


def test_the_reason_bound_leaves_room_for_a_sentence(bound: int) -> None:
    assert bound >= 120  # the 40 of before cut most reasons


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_no_recorded_reason_is_cut_at_the_bound(path: Path, bound: int) -> None:
    answers = _answers(path)
    assert answers or path.stat().st_size == 0, path
    for number, _line, decision in answers:
        reason = decision["reason"]
        where = f"{path.name}:{number}: {reason!r}"
        assert len(reason) < bound, f"{where} reached the bound: cut by the grammar"
        assert reason == reason.strip() and ENDED.search(reason), f"{where} stops mid-word"


def test_the_route_budget_fits_every_recorded_answer(bound: int) -> None:
    [route] = load_contract(EXAMPLE / "capabilities/refunds/agents/triage.yaml").routes
    assert route.max_tokens >= bound + 57  # the other fields take 57 tokens at most
    for number, line, _decision in _answers(EXAMPLE / "responses" / "eval-triage.jsonl"):
        assert line.get("finish_reason") == "stop", number
        assert line["completion_tokens"] < route.max_tokens, number
