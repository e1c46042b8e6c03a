"""Run from the wrong folder, hints say where mir looked and what the command can take:
``--project`` only to commands that have it, ``mir agents list`` (not ``mir agents``,
which prints help), the project a path belongs to, the folder ``@FILE`` is read from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO

NO_PROJECT = "error: no mir project found in {} or any parent (no pyproject.toml with [tool.mir])"


@pytest.mark.parametrize(
    "args",
    [("agents", "list"), ("run", "agent", "refunds.triage", "-i", "{}"), ("traces", "list")],
)
def test_a_command_with_project_says_pass_project(run_mir, tmp_path: Path, args):
    result = run_mir(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == NO_PROJECT.format(tmp_path.resolve()) + (
        " (run it inside a mir project or pass its folder with --project DIR"
        " (`mir init` makes one))"
    )


@pytest.mark.parametrize(
    "args", [("new", "agent", "refunds", "triage"), ("new", "capability", "refunds")]
)
def test_a_command_without_project_is_not_told_to_pass_one(run_mir, tmp_path: Path, args):
    result = run_mir(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "--project" not in result.stderr and "pass the project folder" not in result.stderr
    assert result.stderr.strip() == NO_PROJECT.format(tmp_path.resolve()) + (
        " (run it inside a mir project, or `mir init` to make this folder one)"
    )


def test_lint_names_its_root_argument(run_mir, tmp_path: Path):
    result = run_mir("lint", "boundaries", cwd=tmp_path)
    assert result.returncode == 2
    assert "--project" not in result.stderr
    assert "pass the project's folder as ROOT" in result.stderr


def test_an_agent_hint_names_mir_agents_list(run_mir, app: Path):
    result = run_mir("eval", "refunds.nope", cwd=app)
    assert result.returncode == 2
    assert "`mir agents list`" in result.stderr
    assert "`mir agents` " not in result.stderr


def test_from_mir_s_own_checkout_the_hint_names_the_project_it_found(run_mir):
    # mir lints itself, so its checkout is a mir project whose capabilities are in mir/:
    # a newcomer following the README from the clone must see that, not a path under mir/
    result = run_mir("run", "agent", "support_desk.triage", "-i", "{}", cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(
        f"error: no agent 'support_desk.triage' in the project at {REPO}: "
        "mir/support_desk/agents/triage.yaml does not exist"
    )
    evaluated = run_mir("eval", "support_desk.triage", cwd=REPO)
    assert f"in the project at {REPO}" in evaluated.stderr


def test_at_file_says_it_is_read_from_the_current_folder(run_mir, app: Path):
    below = app / "capabilities"
    result = run_mir("run", "agent", "refunds.triage", "-i", "@input.json", cwd=below)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --input: file not found: input.json "
        f"(read relative to the current folder: {below.resolve() / 'input.json'})"
    )
    absolute = run_mir("run", "agent", "refunds.triage", "-i", f"@{app}/no.json", cwd=below)
    assert absolute.stderr.strip() == f"error: --input: file not found: {app}/no.json"


def test_a_missing_contract_path_is_named_as_such(run_mir, app: Path):
    result = run_mir("run", "agent", "nope/triage.yaml", "-i", "{}", cwd=app)
    assert result.returncode == 2
    # it used to be "folder not found: nope (check the path given as the project folder)"
    assert result.stderr.strip() == (
        "error: contract file not found: nope/triage.yaml "
        f"(read relative to the current folder: {app.resolve()}/nope/triage.yaml)"
    )
    suite = run_mir("eval", "evals/nope.yaml", cwd=app)
    assert "read relative to the current folder" in suite.stderr
