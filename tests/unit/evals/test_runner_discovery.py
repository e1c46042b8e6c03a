"""Which suites ``mir eval [TARGETS]`` runs, and the agent each one tests (real files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mir.errors import ConfigError, UsageError
from mir.evals.discovery import find_suites
from mir.project import find_project

FIXTURE = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"
CASE = "cases:\n  - id: one\n    input: {order_id: A1, amount: 1, message: x}\n"


@pytest.fixture
def project(tmp_path: Path):
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text("agent: triage\n" + CASE)
    (evals / "quick.yaml").write_text("agent: refunds.quick\n" + CASE)
    return find_project(root)


def _names(suites) -> list[tuple[str, str]]:
    return [(s.ref, s.agent) for s in suites]


def test_no_target_runs_every_suite_of_the_project(project):
    assert _names(find_suites([], project)) == [
        ("capabilities/refunds/evals/quick.yaml", "refunds.quick"),
        ("capabilities/refunds/evals/triage.yaml", "refunds.triage"),
    ]


def test_an_agent_target_runs_only_its_suites(project):
    assert _names(find_suites(["refunds.triage"], project)) == [
        ("capabilities/refunds/evals/triage.yaml", "refunds.triage")
    ]


def test_a_folder_or_a_file_target(project):
    evals = project.capabilities_dir / "refunds" / "evals"
    assert len(find_suites([project.root], project)) == 2
    assert len(find_suites([evals], project)) == 2
    assert _names(find_suites([evals / "quick.yaml"], project))[0][1] == "refunds.quick"
    # named twice: run once
    assert len(find_suites([evals / "quick.yaml", "refunds.quick"], project)) == 1


def test_an_unknown_agent_target_suggests_the_capability_that_has_it(project):
    with pytest.raises(UsageError, match=r"unknown agent 'billing\.triage'") as caught:
        find_suites(["billing.triage"], project)
    assert "refunds.triage" in str(caught.value)


def test_an_agent_without_suites(project):
    (project.capabilities_dir / "refunds" / "evals" / "quick.yaml").unlink()
    with pytest.raises(UsageError, match=r"no eval suite tests refunds\.quick"):
        find_suites(["refunds.quick"], project)


def test_a_suite_of_a_missing_agent_points_at_its_agent_line(project):
    suite = project.capabilities_dir / "refunds" / "evals" / "triage.yaml"
    suite.write_text("# header\n\nagent: nobody\n" + CASE)
    with pytest.raises(ConfigError) as caught:
        find_suites([suite], project)
    assert caught.value.where == f"{suite}:3"


def test_nothing_to_run(tmp_path: Path):
    root = tmp_path / "empty"
    shutil.copytree(FIXTURE, root)
    with pytest.raises(UsageError, match="no eval suites"):
        find_suites([], find_project(root))
