"""The gate end to end, through the real ``mir eval`` CLI on recorded (scripted) runs.

A 40-case suite of the runtime fixture agent (tests/fixtures/evals/gate, written by its
``make_fixture.py``) gets a committed baseline from one run (36 pass, 4 still fail);
then other recorded runs stand for a change of prompt or model:

- a prompt edit that breaks 6 of the 40 cases: McNemar p = 0.031 < 0.05, exit 1, the
  six named;
- a noise-only change (2 broken, 2 fixed): exit 0, within noise;
- one ``critical`` case broken: exit 1 on that alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE, REPO, RunMir

FIXTURE = REPO / "tests" / "fixtures" / "evals" / "gate"
RUNTIME_PROJECT = REPO / "tests" / "fixtures" / "runtime" / "project"
SUITE = Path("capabilities") / "refunds" / "evals" / "triage.yaml"
BASELINE = SUITE.parent / "baselines" / "triage.json"
BROKEN_BY_EDIT = {
    "small-refund-03",
    "small-refund-07",
    "deny-cancelled-02",
    "deny-cancelled-05",
    "escalate-large-01",
    "escalate-large-04",
}


@pytest.fixture(scope="module")
def baselined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture project with the suite and a baseline written by ``mir eval
    --update-baseline`` from the baseline run (made once; the tests only read it)."""
    root = tmp_path_factory.mktemp("gate") / "app"
    shutil.copytree(RUNTIME_PROJECT, root)
    (root / SUITE).parent.mkdir(parents=True)
    shutil.copy(FIXTURE / "triage.yaml", root / SUITE)
    for run in FIXTURE.glob("*.jsonl"):
        shutil.copy(run, root / run.name)
    # run_mir is function-scoped; the baseline is made once for the module
    made = subprocess.run(
        [str(MIR_EXE), "eval", "--update-baseline", "--responses", "baseline.jsonl"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # 4 cases fail in the baseline run: with no baseline before it, that run fails its
    # gate (exit 1), and the baseline records them as known failures
    assert made.returncode == 1, made.stdout + made.stderr
    assert "4 failing cases recorded as known failures" in made.stderr
    assert (root / BASELINE).is_file()
    return root


def _eval(run_mir: RunMir, root: Path, responses: str, *extra: str):
    return run_mir("eval", "--responses", responses, *extra, cwd=root)


def _gate(run_mir: RunMir, root: Path, responses: str) -> dict:
    ran = _eval(run_mir, root, responses, "--format", "json")
    report = json.loads(ran.stdout)
    assert ran.returncode == report["exit_code"], ran.stderr
    (suite,) = report["suites"]
    return suite


def test_the_baseline_records_every_case(baselined: Path) -> None:
    baseline = json.loads((baselined / BASELINE).read_text())
    assert len(baseline["cases"]) == 40
    failing = {case for case, runs in baseline["cases"].items() if not runs[0]["passed"]}
    assert failing == {"hard-01", "hard-02", "hard-03", "hard-04"}


def test_the_same_run_again_passes_with_nothing_changed(run_mir: RunMir, baselined: Path) -> None:
    suite = _gate(run_mir, baselined, "baseline.jsonl")
    assert suite["gate"]["passed"]
    assert suite["comparison"]["broken"] == [] and suite["comparison"]["fixed"] == []
    assert len(suite["comparison"]["still_failing"]) == 4


def test_a_prompt_edit_that_breaks_6_of_40_fails_and_names_them(
    run_mir: RunMir, baselined: Path
) -> None:
    ran = _eval(run_mir, baselined, "prompt-edit.jsonl")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    for case in BROKEN_BY_EDIT:
        assert case in ran.stdout
    assert "regression" in ran.stdout
    suite = _gate(run_mir, baselined, "prompt-edit.jsonl")
    assert set(suite["comparison"]["broken"]) == BROKEN_BY_EDIT
    assert suite["comparison"]["fixed"] == []
    assert suite["comparison"]["p_value"] == pytest.approx(2 * 0.5**6)
    assert not suite["gate"]["passed"]


def test_two_broken_and_two_fixed_is_noise(run_mir: RunMir, baselined: Path) -> None:
    ran = _eval(run_mir, baselined, "noise.jsonl")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "within noise" in ran.stdout
    suite = _gate(run_mir, baselined, "noise.jsonl")
    assert set(suite["comparison"]["broken"]) == {"small-refund-02", "deny-cancelled-03"}
    assert set(suite["comparison"]["fixed"]) == {"hard-01", "hard-02"}
    assert suite["comparison"]["p_value"] == pytest.approx(1.0)


def test_one_broken_critical_case_fails_the_gate(run_mir: RunMir, baselined: Path) -> None:
    ran = _eval(run_mir, baselined, "critical.jsonl")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "critical-refund-limit-01" in ran.stdout
    assert "critical" in ran.stdout
    suite = _gate(run_mir, baselined, "critical.jsonl")
    assert suite["comparison"]["broken"] == ["critical-refund-limit-01"]
    assert suite["comparison"]["p_value"] == pytest.approx(1.0)
