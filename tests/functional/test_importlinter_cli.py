"""``mir lint boundaries --config FILE`` end to end, on the import-linter fixtures: the
JSON findings are exactly the library's, and a config lint-imports refuses is one error
line naming the file and the contract."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from mir.importlinter import evaluate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importlinter"


def test_broken_contracts_exit_1_with_their_findings_as_json(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "layers"
    shutil.copytree(FIXTURES / "layers", tree)
    config = tree / ".importlinter"

    args = ("lint", "boundaries", str(tree), "--config", str(config), "--no-cache")

    result = run_mir(*args, "--format", "json")

    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    # JSON columns count from 1 (Finding.column is 0-based, like ast's)
    expected = [
        {**asdict(f), "column": f.column + 1} for r in evaluate(tree, config) for f in r.findings
    ]
    assert sorted(map(json.dumps, findings)) == sorted(map(json.dumps, expected))
    assert {f["contract"] for f in findings} == {
        "Tangled layers broken through a lazy import chain",
        "Capability layers in wildcard containers broken",
        "Exhaustive layers broken by an undeclared module",
        "Independent siblings broken",
    }


def test_kept_contracts_exit_0(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "vault"
    shutil.copytree(FIXTURES / "unimportable", tree)
    config = tree / "kept.ini"
    config.write_text(
        "[importlinter]\nroot_package = vault\n\n[importlinter:contract:k]\nname = Keys pure\n"
        "type = forbidden\nsource_modules = vault.core.keys\nforbidden_modules = vault.ui\n"
    )

    result = run_mir("lint", "boundaries", str(tree), "--config", str(config), "--no-cache")

    assert result.returncode == 0, result.stdout + result.stderr


def test_refused_config_is_one_error_line_naming_file_and_contract(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "errors"
    shutil.copytree(FIXTURES / "errors", tree)
    config = tree / "configs" / "unknown_option.ini"

    result = run_mir("lint", "boundaries", str(tree), "--config", str(config), "--no-cache")

    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {config}:4: contract 'Misspelled option': exhaustiv: ")
    assert "Did you mean 'exhaustive'?" in line
