"""The judge capability is user code like any other: it passes ``mir lint boundaries``
as a project's capability, its agents load by path, and its schemas hold their bounds."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from mir.contracts import load_contract
from mir.evals.judge_identity import judge_home
from tests.conftest import MIR_EXE


def test_the_judge_passes_mir_lint_boundaries_as_a_users_capability(tmp_path: Path):
    root = tmp_path / "app"
    shutil.copytree(judge_home(), root / "capabilities" / "judge")
    (root / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    result = subprocess.run(
        [str(MIR_EXE), "lint", "boundaries", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 capabilit" in result.stdout


def test_both_agents_load_by_path_and_name_themselves_judge(tmp_path: Path):
    from mir.runtime import load_agent
    from mir.traces import TraceStore

    root = tmp_path / "app"
    (root / "capabilities").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    store = TraceStore(tmp_path / "traces")
    for name, actions in (("grade", {"pass", "fail"}), ("compare", {"A", "B", "tie"})):
        contract = judge_home() / "agents" / f"{name}.yaml"
        assert load_contract(contract).agent == name
        with load_agent(contract, project=root, traces=store) as agent:
            assert agent.name == f"judge.{name}"
            assert set(agent.contract.actions) == actions
            assert agent.contract.review.confidence_threshold == 0
            assert agent.contract.fallback.rules == [] and agent.contract.fallback.default is None
    store.close()
    # loaded by file, never as an importable top-level `capabilities` package of mir
    assert not any(
        m == "capabilities.judge" or m.startswith("capabilities.judge.") for m in sys.modules
    )


def test_the_decision_schemas_bound_what_the_judge_may_say():
    spec = importlib.util.spec_from_file_location("_judge_domain", judge_home() / "domain.py")
    assert spec is not None and spec.loader is not None
    domain = importlib.util.module_from_spec(spec)
    sys.modules["_judge_domain"] = domain  # pydantic resolves the annotations through it
    try:
        spec.loader.exec_module(domain)
    finally:
        del sys.modules["_judge_domain"]
    grade = domain.Grade(reason="polite and complete", verdict="pass", score=0.9, confidence=1)
    assert list(domain.Grade.model_json_schema()["properties"]) == [
        "reason",
        "verdict",
        "score",
        "confidence",
    ]
    assert grade.verdict == "pass"
    for bad in ({"score": 1.5}, {"verdict": "maybe"}, {"reason": "x" * 121}):
        with pytest.raises(ValidationError):
            domain.Grade.model_validate({**grade.model_dump(), **bad})
    with pytest.raises(ValidationError):
        domain.Preference(reason="r", verdict="C", confidence=1)
