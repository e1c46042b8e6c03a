"""``mir agents``: one broken contract never blocks the others; listings for people and
for programs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    return root


def break_quick(root: Path) -> None:
    contract = root / "capabilities/refunds/agents/quick.yaml"
    contract.write_text(contract.read_text().replace("mission:", "misison:"))


def test_a_broken_contract_is_listed_as_broken_and_blocks_nobody(run_mir, app: Path):
    break_quick(app)
    listing = run_mir("agents", "list", cwd=app)
    assert listing.returncode == 1, listing.stderr  # listed, and a finding
    rows = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert "broken" in rows["refunds.quick"]
    assert "line 4: misison: unknown key (did you mean `mission`?)" in rows["refunds.quick"]
    assert "active" in rows["refunds.triage"]
    # the emergency brake works for every healthy agent...
    suspended = run_mir("agents", "suspend", "refunds.triage", "--reason", "drift", cwd=app)
    assert suspended.returncode == 0, suspended.stderr
    assert run_mir("agents", "resume", "refunds.triage", cwd=app).returncode == 0
    # ...and for the broken one: a process that loaded it before the edit still decides
    assert run_mir("agents", "suspend", "refunds.quick", cwd=app).returncode == 0
    [quick] = [a for a in json.loads(run_mir("agents", "list", "--json", cwd=app).stdout)
               if a["name"] == "refunds.quick"]  # fmt: skip
    assert quick["state"] == "broken" and quick["suspended"] is True
    assert "misison" in quick["error"]


def test_list_json(run_mir, app: Path):
    run_mir("agents", "suspend", "refunds.quick", "--reason", "drift", "--project", str(app))
    result = run_mir("agents", "list", "--json", cwd=app)
    assert result.returncode == 0, result.stderr
    agents = {a["name"]: a for a in json.loads(result.stdout)}
    assert set(agents) == {"refunds.quick", "refunds.triage"}
    assert agents["refunds.quick"]["state"] == "suspended"
    assert agents["refunds.quick"]["reason"] == "drift"
    assert agents["refunds.triage"]["contract"] == "capabilities/refunds/agents/triage.yaml"


def test_an_empty_listing_says_so(run_mir, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mir]\n')
    result = run_mir("agents", "list", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no agents found under capabilities/"
    assert json.loads(run_mir("agents", "list", "--json", cwd=tmp_path).stdout) == []


def test_resume_of_an_active_agent_changes_nothing_and_says_so(run_mir, app: Path):
    result = run_mir("agents", "resume", "refunds.triage", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "not suspended" in result.stdout and "resumed" not in result.stdout
    assert not (app / ".mir" / "agents.json").exists()


def test_a_contract_named_unlike_its_file_is_a_config_error(run_mir, app: Path):
    contract = app / "capabilities/refunds/agents/quick.yaml"
    contract.write_text(contract.read_text().replace("agent: quick", "agent: quik"))
    run = run_mir("run", "agent", "refunds.quick", "-i", "{}", "--provider", "rules", cwd=app)
    assert run.returncode == 2
    assert "quick.yaml:3: agent: 'quik' differs from the file name 'quick.yaml'" in run.stderr
    listing = run_mir("agents", "list", cwd=app)
    [row] = [line for line in listing.stdout.splitlines() if "refunds.quick" in line]
    assert "broken" in row and "differs from the file name" in row


def test_piped_listing_is_not_cut(run_mir, app: Path):
    deep = app / "capabilities" / ("a_capability_with_a_rather_long_name" * 2)
    shutil.copytree(app / "capabilities/refunds", deep)
    result = run_mir("agents", "list", cwd=app, env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    assert f"capabilities/{deep.name}/agents/triage.yaml" in result.stdout
