"""``mir doctor`` attacked: a key value written where a variable name belongs, and a
project whose pyproject.toml does not load (a problem, not "no project")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = "capabilities/refunds/agents/triage.yaml"
PLANTED = "sk-proj-planted0doctor0attack0123456789"


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", ".ruff_cache"))
    return root


def test_a_key_value_in_api_key_env_is_a_problem_never_printed(run_mir, desk: Path):
    contract = desk / CONTRACT
    route = (
        "routes:\n  - name: remote\n    provider: litellm\n    model: openai/gpt-4o-mini\n"
        f"    api_key_env: {PLANTED}\n"
    )
    contract.write_text(contract.read_text().replace("routes:\n", route, 1))
    for args in (("doctor",), ("doctor", "--json")):
        result = run_mir(*args, cwd=desk)
        assert result.returncode == 1, result.stdout + result.stderr
        assert PLANTED not in result.stdout + result.stderr
        assert PLANTED[:14] not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr
    found = json.loads(result.stdout)["checks"]
    bad = [c for c in found if c["name"].startswith("api_key_env")]
    assert bad and bad[0]["status"] == "problem" and "refunds.triage" in bad[0]["name"]
    assert "OPENAI_API_KEY" in bad[0]["fix"]


def test_a_broken_pyproject_is_a_problem_naming_the_file(run_mir, desk: Path):
    pyproject = desk / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.mir\n")
    table = run_mir("doctor", cwd=desk)
    result = run_mir("doctor", "--json", cwd=desk)
    assert table.returncode == 1 and result.returncode == 1, result.stdout
    assert "Traceback" not in table.stderr + result.stderr
    row = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "project")
    assert row["status"] == "problem"
    assert "pyproject.toml" in row["found"] and "invalid TOML" in row["found"]
    assert "pyproject.toml" in row["fix"]
