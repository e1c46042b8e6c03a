"""import-linter contracts run by ``mir lint boundaries``: found automatically or via
``--config``, merged into the same report, formats and baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_contracts_alone_are_checked_without_a_mir_layout(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "importlinter" / "forbidden", tree)
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert findings and all(finding["contract"] for finding in findings)
    broken = {finding["contract"] for finding in findings}
    assert len(broken) == 4  # the fixture has four broken contracts, four kept ones


def test_contracts_and_rules_share_one_report_and_baseline(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "lint" / "rules" / "MIR104", tree)
    config = tmp_path / "contracts.ini"
    config.write_text(
        "[importlinter]\nroot_package = capabilities\n\n"
        "[importlinter:contract:app-no-domain]\nname = Application avoids the domain\n"
        "type = forbidden\nsource_modules =\n    capabilities.refunds.application\n"
        "forbidden_modules =\n    capabilities.refunds.domain\n"
    )
    args = ("lint", "boundaries", str(tree), "--no-cache", "--format", "json")
    without = json.loads(run_mir(*args).stdout)["findings"]
    result = run_mir(*args, "--config", str(config))
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    contracts = [finding for finding in findings if finding["contract"]]
    assert contracts and len(findings) == len(without) + len(contracts)
    assert {f["code"] for f in findings if not f["contract"]} == {"MIR104"}

    baseline = tmp_path / "baseline.json"
    run_mir(*args, "--config", str(config), "--baseline", str(baseline), "--update-baseline")
    again = run_mir(*args, "--config", str(config), "--baseline", str(baseline))
    assert again.returncode == 0
    assert json.loads(again.stdout)["summary"]["baselined"] == len(findings)


def test_a_bad_contract_config_is_a_config_error(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "lint" / "rules" / "MIR104", tree)
    config = tmp_path / "bad.ini"
    config.write_text("[importlinter]\nroot_package = capabilities\n\n[importlinter:contract:x]\n")
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.startswith("error:")


def test_contract_findings_get_their_own_sarif_rules(run_mir, tmp_path: Path) -> None:
    import jsonschema

    tree = tmp_path / "media"
    shutil.copytree(FIXTURES / "importlinter" / "forbidden", tree)
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    schema_path = FIXTURES / "lint" / "schemas" / "sarif-2.1.0-required.schema.json"
    jsonschema.validate(log, json.loads(schema_path.read_text()))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    for item in log["runs"][0]["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        assert item["ruleId"].startswith("IL")


def test_contract_warnings_go_to_stderr_and_do_not_fail(run_mir, tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "importlinter" / "layers", tree)
    config = tree / ".importlinter"
    text = config.read_text()
    # keep only the contract whose stale ignore_imports entry is set to warn
    config.write_text(
        text[: text.index("[importlinter:contract:")]
        + text[text.index("[importlinter:contract:warn-kept]") :]
    )
    result = run_mir("lint", "boundaries", str(tree), "--no-cache", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["findings"] == []
    assert (
        "warning: contract 'Unmatched ignore only warns': No matches for ignored import "
        "shop.plain.low -> shop.nowhere." in result.stderr
    )
