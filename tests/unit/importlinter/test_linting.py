"""The lint use case's pure edges: the contract pre-check, the replay's refusals, the
rule catalogue (mir's rules, then the import-linter codes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.importlinter import RULE_DOCS, replay_project, rule_catalogue, rule_doc
from mir.importlinter.linting import might_have_contracts


def _no_warning(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


@pytest.mark.parametrize("name", [".importlinter", "setup.cfg", "pyproject.toml"])
def test_contracts_are_suspected_in_any_file_lint_imports_reads(tmp_path: Path, name) -> None:
    assert not might_have_contracts(tmp_path)
    (tmp_path / name).write_text("[importlinter]\nroot_package = shop\n")
    assert might_have_contracts(tmp_path)


def test_an_unreadable_config_file_is_no_contract(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").mkdir()  # a folder where a file was expected
    assert not might_have_contracts(tmp_path)


def test_nothing_cached_means_no_replay_and_the_full_run_decides(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    assert replay_project(tmp_path, None, None, None, _no_warning) is None
    assert replay_project(tmp_path / "missing", None, None, None, _no_warning) is None


def test_a_broken_pyproject_on_the_way_up_is_left_to_the_full_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mir\n")
    monkeypatch.chdir(tmp_path)
    assert replay_project(None, None, None, None, _no_warning) is None


def test_the_catalogue_lists_mir_rules_then_every_contract_code() -> None:
    codes = [code for code, _, _ in rule_catalogue()]
    assert codes[0].startswith("MIR")
    assert codes[-len(RULE_DOCS) :] == list(RULE_DOCS)
    assert rule_doc("il001") == RULE_DOCS["IL001"]
    name = next(name for code, name, _ in rule_catalogue() if code == "IL002")
    assert rule_doc(name) == RULE_DOCS["IL002"]
    with pytest.raises(UsageError, match="no rule 'MIR1O1'") as refused:
        rule_doc("MIR1O1")
    assert "did you mean `MIR101`?" in (refused.value.hint or "")
