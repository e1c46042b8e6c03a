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
