"""``mir agents``: a broken agent is a finding (exit 1, named), and suspend/resume answer
alike when nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.functional.test_agents_cli import break_quick


def test_a_broken_agent_makes_the_listing_exit_1_and_is_named(run_mir, app: Path):
    break_quick(app)
    listing = run_mir("agents", "list", cwd=app)
    assert listing.returncode == 1, listing.stderr
    assert "active" in listing.stdout  # the healthy ones are still listed
    assert listing.stderr.strip() == (
        "1 broken agent: refunds.quick (its contract does not load: the row says why)"
    )
    as_json = run_mir("agents", "list", "--json", cwd=app)
    assert as_json.returncode == 1
    assert {a["name"]: a["state"] for a in json.loads(as_json.stdout)}["refunds.quick"] == "broken"


def test_a_healthy_listing_exits_0(run_mir, app: Path):
    listing = run_mir("agents", "list", cwd=app)
    assert listing.returncode == 0 and listing.stderr == ""


def test_suspend_twice_and_resume_twice_answer_alike(run_mir, app: Path):
    first = run_mir("agents", "suspend", "refunds.triage", "--reason", "drift", cwd=app)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("refunds.triage: suspended (by ")
    state = json.loads((app / ".mir" / "agents.json").read_text())
    again = run_mir("agents", "suspend", "refunds.triage", "--reason", "other", cwd=app)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("refunds.triage: already suspended (suspended by ")
    assert again.stdout.rstrip().endswith("UTC; nothing changed)")
    # nothing changed means nothing written: the first reason, who and when stay
    assert json.loads((app / ".mir" / "agents.json").read_text()) == state

    resumed = run_mir("agents", "resume", "refunds.triage", cwd=app)
    assert resumed.stdout.startswith("refunds.triage: active (resumed by ")
    twice = run_mir("agents", "resume", "refunds.triage", cwd=app)
    assert twice.returncode == 0, twice.stderr
    assert twice.stdout.startswith("refunds.triage: already active (resumed by ")
    assert twice.stdout.rstrip().endswith("UTC; nothing changed)")

    never = run_mir("agents", "resume", "refunds.quick", cwd=app)
    assert never.returncode == 0
    assert never.stdout.strip() == (
        "refunds.quick: already active (it was not suspended; nothing changed)"
    )


def test_listing_takes_format_json_as_well_as_json(run_mir, app: Path):
    by_flag = run_mir("agents", "list", "--json", cwd=app)
    by_format = run_mir("agents", "list", "--format", "json", cwd=app)
    assert by_format.returncode == 0, by_format.stderr
    assert json.loads(by_format.stdout) == json.loads(by_flag.stdout)
    clash = run_mir("agents", "list", "--json", "--format", "table", cwd=app)
    assert clash.returncode == 2
    assert clash.stderr.strip() == ("error: --json and --format table disagree (give one of them)")
    unknown = run_mir("agents", "list", "--format", "yaml", cwd=app)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "error: unknown --format 'yaml' (use one of table, json)"
