"""Baselines: where they live, a stable round-trip, and refusing the wrong one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mir.errors import ConfigError, UsageError
from mir.evals.baselines import (
    baseline_path,
    read_baseline,
    suite_hash,
    write_baseline,
)
from mir.evals.domain import AssertionResult
from tests.unit.evals.gate_factories import make_run, make_suite, result_of

REF = "capabilities/desk/evals/triage.yaml"


def _result(suite=None):
    suite = suite or make_suite(["b", "a"], repeat=2)
    judged = AssertionResult(type="rubric", tier="judge", passed=True, score=0.8, reason="ok")
    runs = [
        make_run("b", True, repeat=1, decision={"action": "reply", "text": "</script>é"}),
        make_run("a", True, repeat=0),
        make_run("b", False, repeat=0),
        make_run("a", True, repeat=1, assertions=(judged,)),
    ]
    return suite, result_of(suite, runs)


def test_path_beside_the_suite() -> None:
    suite = Path("capabilities/desk/evals/triage.yaml")
    assert baseline_path(suite) == Path("capabilities/desk/evals/baselines/triage.json")
    edge = Path("capabilities/desk/evals/triage-edge.yaml")
    assert baseline_path(edge) == Path("capabilities/desk/evals/baselines/triage-edge.json")


def test_round_trip_is_stable_and_complete(tmp_path: Path) -> None:
    suite, result = _result()
    path = tmp_path / "evals" / "baselines" / "triage.json"
    write_baseline(path, result)
    first = path.read_text(encoding="utf-8")
    write_baseline(path, result)
    assert path.read_text(encoding="utf-8") == first  # same run, byte-identical file
    assert first.endswith("}\n") and "\n  " in first  # indented, one value per line
    assert list(tmp_path.joinpath("evals", "baselines").iterdir()) == [path]  # no temp left
    data = json.loads(first)
    assert list(data) == sorted(data)
    baseline = read_baseline(path, suite, REF)
    assert baseline is not None
    assert baseline.agent == "triage" and baseline.suite == REF
    assert baseline.model == "script" and baseline.prompt_hash == "p1"
    assert baseline.suite_hash == suite_hash(["a", "b"])
    assert [(r.repeat, r.passed) for r in baseline.cases["b"]] == [(0, False), (1, True)]
    assert baseline.cases["b"][1].decision == {"action": "reply", "text": "</script>é"}
    assert baseline.cases["a"][1].scores == {"0": 0.8}
    # the comparison reads it back as it was written
    again = result_of(suite, list(result.runs), baseline=baseline)
    assert again.comparison.still_failing == ("b",) and again.comparison.still_passing == 1


def test_missing_baseline_is_none(tmp_path: Path) -> None:
    suite, _ = _result()
    assert read_baseline(tmp_path / "nope.json", suite, REF) is None


def test_unparsable_baseline_is_a_config_error(tmp_path: Path) -> None:
    suite, _ = _result()
    path = tmp_path / "triage.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_baseline(path, suite, REF)
    text = str(caught.value)
    assert str(path) in text and "mir eval --update-baseline" in text and "\n" not in text


def test_baseline_of_another_agent_is_refused(tmp_path: Path) -> None:
    other = make_suite(["a", "b"], agent="refunds")
    _, result = _result(other)
    path = tmp_path / "triage.json"
    write_baseline(path, result)
    suite, _ = _result()
    with pytest.raises(ConfigError) as caught:
        read_baseline(path, suite, REF)
    text = str(caught.value)
    assert "agent 'refunds'" in text and str(path) in text and "--update-baseline" in text


def test_baseline_sharing_no_case_is_refused(tmp_path: Path) -> None:
    _, result = _result(make_suite(["x", "y"], repeat=1).model_copy())
    # same agent, but written for a suite with none of these cases
    result = result.model_copy(
        update={"runs": tuple(r.model_copy(update={"case_id": "x"}) for r in result.runs)}
    )
    path = tmp_path / "triage.json"
    write_baseline(path, result)
    suite, _ = _result()
    with pytest.raises(ConfigError, match="shares no case id"):
        read_baseline(path, suite, REF)


def test_an_interrupted_run_is_not_written(tmp_path: Path) -> None:
    _, result = _result()
    with pytest.raises(UsageError, match="interrupted"):
        write_baseline(tmp_path / "b.json", result.model_copy(update={"interrupted": True}))
    assert not (tmp_path / "b.json").exists()
