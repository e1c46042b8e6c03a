"""MIR205 module-not-placed as a user meets it: an existing project baselines the new
findings, places modules one at a time, and a flat capability needs no places."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR205", root)
    return root


def _lint(run_mir, tree: Path, *args: str):
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json", *args)
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else None


def _doc(tree: Path) -> Path:
    return tree / "capabilities" / "refunds" / "CLAUDE.md"


def test_an_existing_project_baselines_the_unplaced_modules(run_mir, tree: Path) -> None:
    baseline = tree / "lint-baseline.json"
    code, _ = _lint(run_mir, tree, "--baseline", str(baseline), "--update-baseline")
    assert code == 0
    recorded = json.loads(baseline.read_text())["findings"]
    assert sorted(entry["importer"] for entry in recorded) == [
        "capabilities.refunds.importers",
        "capabilities.refunds.storage",
    ]
    assert _lint(run_mir, tree, "--baseline", str(baseline))[0] == 0

    # placing one module makes its entry stale; a new unplaced module fails alone
    doc = _doc(tree)
    doc.write_text(
        doc.read_text().replace("{policy: domain}", "{policy: domain, storage: adapters}")
    )
    (tree / "capabilities" / "refunds" / "pricing.py").write_text("rate = 1\n")
    code, payload = _lint(run_mir, tree, "--baseline", str(baseline))
    assert code == 1
    assert [f["importer"] for f in payload["findings"]] == ["capabilities.refunds.pricing"]
    assert [entry["importer"] for entry in payload["stale"]] == ["capabilities.refunds.storage"]


def test_placed_or_flat_is_clean_and_placement_feeds_the_layer_rule(run_mir, tree: Path) -> None:
    doc = _doc(tree)
    doc.write_text(
        doc.read_text().replace(
            "{policy: domain}", "{policy: domain, storage: domain, importers: adapters}"
        )
    )
    assert _lint(run_mir, tree)[0] == 0
    # the place is real: a module placed in the domain is held to the domain's rules
    (tree / "capabilities" / "refunds" / "storage.py").write_text(
        "from capabilities.refunds.importers.csv_rows import rows\n"
    )
    code, payload = _lint(run_mir, tree)
    assert code == 1
    assert [f["code"] for f in payload["findings"]] == ["MIR101"]


def test_flat_beside_layers_is_an_invalid_intent_doc(run_mir, tree: Path) -> None:
    doc = tree / "capabilities" / "notes" / "CLAUDE.md"
    doc.write_text(doc.read_text().replace("layout: flat", "layout: flat\nlayers: {store: domain}"))
    code, payload = _lint(run_mir, tree)
    assert code == 1
    invalid = [f for f in payload["findings"] if f["code"] == "MIR202"]
    assert len(invalid) == 1 and "flat capability places no module" in invalid[0]["message"]
    misspelt = (
        doc.read_text()
        .replace("layout: flat", "layout: flatt")
        .replace("layers: {store: domain}\n", "")
    )
    doc.write_text(misspelt)
    code, payload = _lint(run_mir, tree)
    assert [f["code"] for f in payload["findings"] if f["capability"] == "notes"] == ["MIR202"]
