"""Small things a newcomer hits in the first hour: planned commands, an empty role,
``dir(mir)``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("command", ["eval", "drift"])
def test_once_planned_commands_are_built(run_mir, tmp_path, command: str):
    # `mir eval` and `mir drift` used to be placeholders that exited 2 "not built yet"
    result = run_mir(command, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "not built yet" not in result.stdout
    assert command in run_mir("--help").stdout


def test_an_empty_role_is_a_usage_error(run_mir, tmp_path):
    result = run_mir("run", "agent", "refunds.triage", "-i", "{}", "--role", "", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --role: empty role (name the caller's role, e.g. --role support)"
    )


def test_dir_of_the_package_is_its_public_api(tmp_path):
    code = "import json, mir, mir.cli; print(json.dumps(dir(mir)))"
    out = subprocess.check_output([sys.executable, "-c", code], text=True, cwd=tmp_path)
    names = json.loads(out)
    assert {"Any", "annotations", "import_module", "cli"}.isdisjoint(names)
    assert {"load_agent", "Agent", "approve", "reject", "__version__"} <= set(names)


def test_the_schema_listing_has_json_too(run_mir):
    names = json.loads(run_mir("schema", "--json").stdout)
    assert "agent-contract.schema.json" in names and names == sorted(names)
