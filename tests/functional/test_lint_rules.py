"""Every rule: its fixture tree, run through the real ``mir``, and a snapshot of the output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.boundaries import all_rules

RULES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"
CODES = [rule.code for rule in all_rules()]


def test_every_rule_has_a_fixture_tree() -> None:
    assert sorted(path.name for path in RULES_DIR.iterdir()) == sorted(CODES)


@pytest.mark.parametrize("code", CODES)
def test_rule_fixture_output(code: str, run_mir, tmp_path: Path, snapshot) -> None:
    tree = tmp_path / code
    shutil.copytree(RULES_DIR / code, tree)
    text = run_mir("lint", "boundaries", str(tree), "--no-cache")
    as_json = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json")
    assert text.returncode == 1, text.stderr
    findings = json.loads(as_json.stdout)["findings"]
    assert findings, "the fixture must trigger its rule"
    assert {finding["code"] for finding in findings} == {code}
    assert text.stdout == snapshot


@pytest.mark.parametrize("code", CODES)
def test_explain_prints_the_fixed_sections(code: str, run_mir) -> None:
    result = run_mir("lint", "explain", code)
    assert result.returncode == 0
    for section in ("What it does", "Why it matters", "Example", "How to fix"):
        assert section in result.stdout


def test_rules_lists_every_code(run_mir) -> None:
    result = run_mir("lint", "rules")
    assert result.returncode == 0
    for code in CODES:
        assert code in result.stdout


def test_explain_unknown_code_is_a_usage_error(run_mir) -> None:
    result = run_mir("lint", "explain", "MIR999")
    assert result.returncode == 2
    assert "error:" in result.stderr and "MIR999" in result.stderr
