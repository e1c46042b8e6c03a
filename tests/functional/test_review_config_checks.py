"""An approvals role no declared reviewer holds, and review rules that name what the
schemas lack, are contract errors: `mir agents list` shows the agent broken with every
problem at its line, and loading it (`mir run agent`) refuses, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RunMir
from tests.functional import test_review_rules_cli as rules
from tests.functional.test_review_rules_cli import CONTRACT, RULE, line_of, ticket


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    return rules.desk.__wrapped__(tmp_path)


def listed(run_mir: RunMir, desk: Path) -> dict:
    done = run_mir("agents", "list", "--json", cwd=desk)
    return {agent["name"]: agent for agent in json.loads(done.stdout)}


def run(run_mir: RunMir, desk: Path):
    return run_mir(
        "run", "agent", "refunds.triage", "--input", ticket(149.0), "--provider", "scripted",
        "--responses", "responses/blender_broken.jsonl", cwd=desk,
    )  # fmt: skip


def test_a_role_no_reviewer_holds_is_listed_and_refused_at_its_line(run_mir: RunMir, desk: Path):
    contract = desk / CONTRACT
    assert listed(run_mir, desk)["refunds.triage"]["state"] == "active"
    text = contract.read_text()
    contract.write_text(text.replace("roles: [support_lead]", "roles: [support_led]", 1))
    line = line_of(contract, "roles: [support_led]")
    problem = (
        "actions.refund.approvals.roles.0: no reviewer in reviewers.toml holds role "
        "'support_led'; did you mean 'support_lead'? (declared roles: support_lead)"
    )
    agent = listed(run_mir, desk)["refunds.triage"]
    assert agent["state"] == "broken" and agent["error"] == f"line {line}: {problem}"
    ran = run(run_mir, desk)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert f"error: {contract}:{line}: {problem}" in ran.stderr
    # the emergency brake still works on it
    assert run_mir("agents", "suspend", "refunds.triage", cwd=desk).returncode == 0
    # without reviewers.toml there is nobody to hold it to: approving says so instead
    (desk / "reviewers.toml").unlink()
    assert listed(run_mir, desk)["refunds.triage"]["state"] == "suspended"


def test_review_rules_naming_what_the_contract_lacks_are_listed_all_at_once(
    run_mir: RunMir, desk: Path
):
    contract = desk / CONTRACT
    text = contract.read_text()
    contract.write_text(
        text.replace(
            RULE,
            RULE + '        - {field: context.customr, op: "==", value: gold}\n  always: [refnd]\n',
        )
    )
    error = listed(run_mir, desk)["refunds.triage"]["error"]
    problems = error.split("; line ")
    assert len(problems) == 2, error
    assert problems[0].startswith(
        f"line {line_of(contract, 'context.customr')}: review.when.0.conditions.2.field: "
        "'context.customr' is not in the contract's context scope"
    )
    assert problems[1].startswith(
        f"{line_of(contract, 'always: [refnd]')}: review.always.0: unknown action 'refnd'"
    )
    assert run(run_mir, desk).returncode == 2
