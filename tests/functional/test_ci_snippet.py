"""The GitHub Actions workflow the README documents is a valid workflow (SchemaStore's
schema, as vendored by check-jsonschema) and runs the commands it claims to."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

README = Path(__file__).resolve().parents[2] / "README.md"


def _workflow_schema() -> dict:
    vendor = pytest.importorskip("check_jsonschema.builtin_schemas.vendor")
    return json.loads((resources.files(vendor) / "github-workflows.json").read_text())


def _snippet() -> dict:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### In CI") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    workflow = yaml.safe_load(block.group(1))
    if True in workflow:  # YAML 1.1 reads the key `on` as true; GitHub reads "on"
        workflow["on"] = workflow.pop(True)
    return workflow


def test_the_readme_workflow_is_a_valid_github_workflow() -> None:
    workflow = _snippet()
    validator = jsonschema.Draft7Validator(_workflow_schema())
    assert [error.message for error in validator.iter_errors(workflow)] == []
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert any("--format github" in run for run in runs)
    assert any("--format sarif" in run for run in runs)


def test_the_schema_check_can_fail() -> None:
    broken = {"on": "push", "jobs": {"x": {"runs-on": "ubuntu-latest", "steps": [{"uses": 1}]}}}
    assert list(jsonschema.Draft7Validator(_workflow_schema()).iter_errors(broken))
