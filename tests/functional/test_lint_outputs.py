"""``--format json|sarif|github|junit`` and exit codes, through the real ``mir``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
FIELDS = {
    "code",
    "path",
    "line",
    "column",
    "message",
    "rule",
    "capability",
    "importer",
    "imported",
    "contract",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "rules" / "MIR104", root)
    return root


def test_json_findings_have_every_field_and_posix_relative_paths(run_mir, tree: Path) -> None:
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["findings"]
    for finding in payload["findings"]:
        assert set(finding) == FIELDS
        assert not finding["path"].startswith("/") and "\\" not in finding["path"]
        assert (tree / finding["path"]).is_file()
    assert payload["summary"]["findings"] == len(payload["findings"])
    assert payload["summary"]["by_code"] == {"MIR104": len(payload["findings"])}


def test_sarif_is_valid_and_points_at_real_rules(run_mir, tree: Path) -> None:
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "sarif")
    assert result.returncode == 1
    log = json.loads(result.stdout)
    schema = json.loads((FIXTURES / "schemas" / "sarif-2.1.0-required.schema.json").read_text())
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["results"]
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        uri = item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert (tree / uri).is_file()


def test_sarif_schema_check_can_fail() -> None:
    schema = json.loads((FIXTURES / "schemas" / "sarif-2.1.0-required.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "2.1.0", "runs": [{"results": []}]}, schema)


def _official_sarif_validator() -> jsonschema.Draft4Validator:
    """The OASIS SARIF 2.1.0 schema as published (see tests/fixtures/lint/schemas/README.md)."""
    schema = json.loads((FIXTURES / "schemas" / "sarif-2.1.0-rtm.5.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@pytest.mark.parametrize("fixture", ["MIR104", "MIR101", "MIR301"])
def test_sarif_is_valid_against_the_official_schema(run_mir, tmp_path: Path, fixture: str) -> None:
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / "rules" / fixture, root)
    result = run_mir("lint", "boundaries", str(root), "--no-cache", "--format", "sarif")
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert log["runs"][0]["results"]
    errors = [error.message for error in _official_sarif_validator().iter_errors(log)]
    assert errors == []


def test_official_sarif_schema_check_can_fail() -> None:
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "x"}]}]}
    assert list(_official_sarif_validator().iter_errors(broken))


def test_github_prints_one_annotation_per_finding(run_mir, tree: Path) -> None:
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "github")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 6
    pattern = re.compile(r"^::error file=[^,]+,line=\d+,col=\d+,title=MIR104 forbidden-import::.+$")
    assert all(pattern.match(line) for line in lines), lines


def test_junit_is_well_formed_with_one_failure_per_finding(run_mir, tree: Path) -> None:
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "junit")
    assert result.returncode == 1
    root = ElementTree.fromstring(result.stdout.encode())
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    failures = [case for case in cases if case.find("failure") is not None]
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == len(failures) == 6
    assert all(case.find("failure").get("message") for case in failures)


def test_junit_reads_back_in_an_independent_junit_parser(run_mir, tree: Path) -> None:
    """junitparser (what CI report tools build on) sees the same suite and failures."""
    from junitparser import Failure, JUnitXml

    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "junit")
    xml = JUnitXml.fromstring(result.stdout)
    suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
    cases = [case for suite in suites for case in suite]
    failed = [case for case in cases if any(isinstance(r, Failure) for r in case.result)]
    assert len(failed) == 6
    assert all(case.name and case.classname for case in cases)
    assert sum(suite.failures for suite in suites) == 6
    assert sum(suite.tests for suite in suites) == len(cases)


def test_clean_project_exits_zero(run_mir, tmp_path: Path) -> None:
    root = tmp_path / "clean"
    shutil.copytree(FIXTURES / "rules" / "MIR104", root)
    (root / "capabilities" / "refunds" / "domain.py").write_text("import json\n")
    (root / "capabilities" / "refunds" / "application.py").write_text("import json\n")
    (root / "capabilities" / "refunds" / "__init__.py").write_text('__all__ = ["Refund"]\n')
    (root / "capabilities" / "refunds" / "domain.py").write_text("class Refund: ...\n")
    init = "from capabilities.refunds.domain import Refund\n\n__all__ = ['Refund']\n"
    (root / "capabilities" / "refunds" / "__init__.py").write_text(init)
    result = run_mir("lint", "boundaries", str(root), "--no-cache")
    assert result.returncode == 0, result.stdout
    assert "All checks passed" in result.stdout
    as_json = run_mir("lint", "boundaries", str(root), "--no-cache", "--format", "junit")
    assert as_json.returncode == 0
    assert 'failures="0"' in as_json.stdout


def test_bad_settings_are_a_config_error(run_mir, tree: Path) -> None:
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.mir.lint.extra]\nx = 1\n")
    result = run_mir("lint", "boundaries", str(tree), "--no-cache")
    assert result.returncode == 2
    assert result.stderr.startswith("error:") and "tool.mir.lint" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_format_and_missing_capabilities_are_usage_errors(run_mir, tmp_path) -> None:
    result = run_mir("lint", "boundaries", str(tmp_path), "--format", "xml")
    assert result.returncode == 2 and "--format" in result.stderr
    result = run_mir("lint", "boundaries", str(tmp_path), "--no-cache")
    assert result.returncode == 2 and "no mir project found" in result.stderr


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _codes(run_mir, root: Path) -> list[tuple[str, str, int]]:
    result = run_mir("lint", "boundaries", str(root), "--no-cache", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return [(f["code"], f["path"], f["line"]) for f in json.loads(result.stdout)["findings"]]


DOC = "---\ncapability: refunds\ndepends_on: []\npublic: []\n---\n# refunds\n"


def test_folders_without_init_are_linted_not_skipped(run_mir, tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.mir]\ncapabilities = "capabilities"\n',
            "capabilities/refunds/__init__.py": "",
            "capabilities/refunds/CLAUDE.md": DOC,
            # domain/ is a namespace package: no __init__.py
            "capabilities/refunds/domain/rules.py": "from capabilities.refunds.adapters import db",
            "capabilities/refunds/adapters/db.py": "import duckdb\n",
        },
    )
    assert _codes(run_mir, tmp_path) == [("MIR101", "capabilities/refunds/domain/rules.py", 1)]


def test_files_with_newer_syntax_still_have_their_imports_checked(run_mir, tmp_path) -> None:
    newer = "import litellm\n\ntype Amount = int\n"  # PEP 695: Python 3.12+
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.mir]\ncapabilities = "capabilities"\n',
            "capabilities/refunds/__init__.py": "",
            "capabilities/refunds/CLAUDE.md": DOC,
            "capabilities/refunds/domain.py": newer,
            "capabilities/refunds/application.py": b"# -*- coding: latin-1 -*-\nX = '\xe9'\n",
        },
    )
    codes = _codes(run_mir, tmp_path)
    assert ("MIR104", "capabilities/refunds/domain.py", 1) in codes
    assert ("MIR301", "capabilities/refunds/domain.py", 3) in codes
    assert not [c for c in codes if c[1].endswith("application.py")]  # latin-1 cookie honoured


def test_dangling_symlinks_and_odd_names_do_not_crash(run_mir, tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.mir]\ncapabilities = "capabilities"\n',
            "capabilities/refunds/__init__.py": "",
            "capabilities/refunds/CLAUDE.md": DOC,
            "capabilities/refunds/my-script.py": "import os\n",
        },
    )
    (tmp_path / "capabilities" / "refunds" / "gone.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "capabilities" / "refunds" / "loop").symlink_to(tmp_path / "capabilities")
    result = run_mir("lint", "boundaries", str(tmp_path), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(2 files, 1 capability)" in result.stdout
