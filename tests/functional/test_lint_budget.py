"""MIR305 capability-too-large: opt-in, counted the way the README says, and a warm
(cached or replayed) run sees a Markdown file grow as a full run does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR305", root)
    return root


def _findings(run_mir, tree: Path, *args: str) -> list[dict]:
    result = run_mir("lint", "boundaries", str(tree), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)["findings"]


def _budget(tree: Path, value: str | None) -> None:
    pyproject = tree / "pyproject.toml"
    text = pyproject.read_text().replace("max_capability_tokens = 60\n", "")
    if value is not None:
        text += f"max_capability_tokens = {value}\n"
    pyproject.write_text(text)


def test_the_size_is_the_bytes_of_py_and_md_files_over_four(run_mir, tree: Path) -> None:
    billing = tree / "capabilities" / "billing"
    files = [*billing.rglob("*.py"), *billing.rglob("*.md")]
    size = sum(path.stat().st_size for path in files)
    (found,) = _findings(run_mir, tree, "--no-cache")
    tokens = -(-size // 4)
    assert found["capability"] == "billing" and found["path"] == "capabilities/billing/CLAUDE.md"
    assert f"about {tokens:,} tokens ({size:,} bytes" in found["message"]
    _budget(tree, str(tokens))  # exactly at the budget is within it
    assert _findings(run_mir, tree, "--no-cache") == []


def test_off_by_default_and_a_bad_budget_is_a_config_error(run_mir, tree: Path) -> None:
    _budget(tree, None)
    assert _findings(run_mir, tree, "--no-cache") == []
    _budget(tree, "0")
    result = run_mir("lint", "boundaries", str(tree), "--no-cache")
    assert result.returncode == 2
    assert "max_capability_tokens" in result.stderr and "Traceback" not in result.stderr


def test_excluded_files_do_not_count_and_a_warm_run_sees_markdown_grow(run_mir, tree: Path) -> None:
    _budget(tree, "81")  # billing is 81 tokens: at the budget
    assert _findings(run_mir, tree) == []
    notes = tree / "capabilities" / "billing" / "NOTES.md"
    notes.write_text(notes.read_text() * 4)
    assert [f["code"] for f in _findings(run_mir, tree)] == ["MIR305"]  # warm: same answer
    text = (tree / "pyproject.toml").read_text()
    (tree / "pyproject.toml").write_text(text + 'exclude = ["capabilities/billing/NOTES.md"]\n')
    assert _findings(run_mir, tree) == []
