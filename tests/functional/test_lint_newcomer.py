"""What a new user meets in the first hour of ``mir lint``: the message outside a
project, columns that count from 1 in every format, ``explain`` for every code a
finding can carry, and full lines when the output is piped."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mir.boundaries import rule_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"
IL_CODES = [f"IL00{n}" for n in range(1, 7)]


def test_outside_a_project_lint_says_what_every_command_says(run_mir, tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    found = run_mir("lint", "boundaries", cwd=empty)
    assert found.returncode == 2 and found.stdout == ""
    assert found.stderr.count("\n") == 1 and "Traceback" not in found.stderr
    assert f"no mir project found in {empty} or any parent" in found.stderr
    assert "(no pyproject.toml with [tool.mir])" in found.stderr
    assert "run `mir init` there first, or pass the project's folder as ROOT" in found.stderr
    assert "capabilities folder" not in found.stderr

    given = run_mir("lint", "boundaries", str(empty), "--format", "json", cwd=tmp_path)
    assert given.returncode == 2
    assert f"no mir project found in {empty} (no pyproject.toml" in given.stderr


def test_a_project_without_its_capabilities_folder_still_says_which(run_mir, tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "caps"\n')
    result = run_mir("lint", "boundaries", cwd=tmp_path)
    assert result.returncode == 2
    assert "capabilities folder 'caps' does not exist" in result.stderr


def test_json_columns_count_from_one_like_text_sarif_and_github(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR104", tree)  # some findings do not start a line
    args = ("lint", "boundaries", str(tree), "--no-cache", "--format")
    findings = json.loads(run_mir(*args, "json").stdout)["findings"]
    text = run_mir("lint", "boundaries", str(tree), "--no-cache").stdout
    sarif = json.loads(run_mir(*args, "sarif").stdout)["runs"][0]["results"]
    github = run_mir(*args, "github").stdout
    assert findings and any(finding["column"] > 1 for finding in findings)
    text_places = re.findall(r"^(\S+?):(\d+):(\d+): ", text, re.MULTILINE)
    assert [(f["path"], str(f["line"]), str(f["column"])) for f in findings] == text_places
    columns = [r["locations"][0]["physicalLocation"]["region"]["startColumn"] for r in sarif]
    assert columns == [finding["column"] for finding in findings]
    assert re.findall(r",col=(\d+)", github) == [str(f["column"]) for f in findings]


@pytest.mark.parametrize("code", IL_CODES)
def test_explain_documents_the_import_linter_codes(run_mir, code: str) -> None:
    result = run_mir("lint", "explain", code.lower())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{code} importlinter-")
    for section in ("What it does", "Why it matters", "Example", "How to fix"):
        assert section in result.stdout
    by_name = run_mir("lint", "explain", result.stdout.split()[1].rstrip(":"))
    assert by_name.stdout == result.stdout
    assert code in run_mir("lint", "rules").stdout


def test_piped_explain_prints_full_lines(run_mir) -> None:
    doc = rule_for("MIR304").doc
    longest = max(doc.splitlines(), key=len)
    assert len(longest) > 80  # the example line rich cut at 80 columns
    result = run_mir("lint", "explain", "MIR304", env={"COLUMNS": "80"})
    assert result.returncode == 0
    assert longest in result.stdout.splitlines()
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]


def test_piped_rules_are_tab_separated_and_whole(run_mir) -> None:
    lines = run_mir("lint", "rules", env={"COLUMNS": "60"}).stdout.splitlines()
    assert lines[0] == "code\tname\twhat it checks"
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(row) == 3 for row in rows)
    assert [row[0] for row in rows][-6:] == IL_CODES
