"""``--baseline``/``--update-baseline``: only new findings fail; fixed ones go stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR104", root)
    return root


def _lint(run_mir, tree: Path, *args: str):
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json", *args)
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else None


def test_baseline_lifecycle(run_mir, tree: Path) -> None:
    baseline = tree / "mir-baseline.json"
    code, _ = _lint(run_mir, tree, "--baseline", str(baseline), "--update-baseline")
    assert code == 0
    recorded = json.loads(baseline.read_text())["findings"]
    assert len(recorded) == 6 and {entry["code"] for entry in recorded} == {"MIR104"}
    assert all("line" not in entry for entry in recorded)

    # known findings pass, even after every line moved
    domain = tree / "capabilities" / "refunds" / "domain.py"
    domain.write_text("# moved\n\n\n" + domain.read_text())
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert code == 0
    assert payload["findings"] == [] and len(payload["baselined"]) == 6

    # a new violation fails, alone
    adapters = tree / "capabilities" / "refunds" / "application.py"
    adapters.write_text(adapters.read_text() + "import sqlalchemy\n")
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert code == 1
    assert [(f["code"], f["imported"]) for f in payload["findings"]] == [("MIR104", "sqlalchemy")]

    # a fixed violation is reported as stale, and updating shrinks the file
    domain.write_text(domain.read_text().replace("import yaml\n", ""))
    text = run_mir("lint", "boundaries", str(tree), "--no-cache", "--baseline", str(baseline))
    assert "stale baseline entry MIR104" in text.stdout
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert [entry["imported"] for entry in payload["stale"]] == ["yaml"]
    _lint(run_mir, tree, "--baseline", str(baseline), "--update-baseline")
    imported = {entry["imported"] for entry in json.loads(baseline.read_text())["findings"]}
    assert "yaml" not in imported and "sqlalchemy" in imported


def test_update_baseline_needs_a_file(run_mir, tree: Path) -> None:
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--update-baseline")
    assert result.returncode == 2
    assert "--baseline" in result.stderr


def test_a_corrupt_baseline_is_a_config_error(run_mir, tree: Path) -> None:
    baseline = tree / "baseline.json"
    baseline.write_text("{not json")
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--baseline", str(baseline))
    assert result.returncode == 2
    assert "baseline" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("cached", [False, True])
def test_a_missing_baseline_file_is_a_usage_error(run_mir, tree: Path, cached: bool) -> None:
    cache = ("--cache-dir", str(tree.parent / "cache")) if cached else ("--no-cache",)
    missing = tree / "lint-baselin.json"  # a typo of lint-baseline.json
    if cached:  # a warm cache must not hide it either
        assert run_mir("lint", "boundaries", str(tree), *cache).returncode == 1
    result = run_mir("lint", "boundaries", str(tree), *cache, "--baseline", str(missing))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"{missing.as_posix()}: baseline file not found" in result.stderr

    created = run_mir(
        "lint", "boundaries", str(tree), *cache, "--baseline", str(missing), "--update-baseline"
    )
    assert created.returncode == 0 and missing.is_file()


def test_a_missing_baseline_setting_is_a_usage_error(run_mir, tree: Path) -> None:
    pyproject = tree / "pyproject.toml"
    setting = '[tool.mir.lint]\nbaseline = "nope.json"\n'
    text = pyproject.read_text().replace("[tool.mir.lint]\n", setting)
    pyproject.write_text(text)
    result = run_mir("lint", "boundaries", str(tree))
    assert result.returncode == 2
    assert f"{(tree / 'nope.json').as_posix()}: baseline file not found" in result.stderr
    assert result.stderr.count("\n") == 1
    assert run_mir("lint", "boundaries", str(tree), "--update-baseline").returncode == 0
    assert run_mir("lint", "boundaries", str(tree)).returncode == 0  # now it is applied


def test_an_entry_in_a_capability_that_could_not_be_checked_is_not_fixed(run_mir, tree: Path):
    # a typo in the intent doc stops the layer rules for that capability: its baselined
    # findings vanish, which read as "fixed, run --update-baseline" (and updating then
    # dropped them, so fixing the typo failed the build on known findings)
    baseline = tree / "mir-baseline.json"
    _lint(run_mir, tree, "--baseline", str(baseline), "--update-baseline")
    recorded = json.loads(baseline.read_text())["findings"]
    doc = tree / "capabilities" / "refunds" / "CLAUDE.md"
    doc.write_text(doc.read_text().replace("capability: refunds", "capabilty: refunds"))

    text = run_mir("lint", "boundaries", str(tree), "--no-cache", "--baseline", str(baseline))
    assert "MIR202" in text.stdout
    assert "stale baseline entry" not in text.stdout and "fixed" not in text.stdout
    assert (
        "baseline entry MIR104 capabilities/refunds/application.py (capabilities.refunds."
        "application -> jinja2): not checked, capabilities/refunds/CLAUDE.md is invalid; kept"
    ) in text.stdout
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert payload["stale"] == []
    assert [e["why"] for e in payload["unchecked"]] == ["capabilities/refunds/CLAUDE.md is invalid"]

    # updating while the doc is broken keeps the unchecked entry
    _lint(run_mir, tree, "--baseline", str(baseline), "--update-baseline")
    doc.write_text(doc.read_text().replace("capabilty: refunds", "capability: refunds"))
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert code == 0, payload["findings"]
    assert len(payload["baselined"]) == sum(entry["count"] for entry in recorded)
    # and the MIR202 entries it recorded meanwhile are stale now: really fixed
    assert {entry["code"] for entry in payload["stale"]} == {"MIR202"}
