"""``mir init``: what it creates, that re-running changes nothing, and its error paths."""

from __future__ import annotations

import tomllib

import pytest

from tests.functional.scaffold_helpers import read_tree


@pytest.fixture
def shop(tmp_path):
    return tmp_path / "shop"


def test_init_creates_the_project_layout(run_mir, shop, snapshot):
    result = run_mir("init", str(shop))
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot(name="output")
    files = read_tree(shop)
    assert sorted(files) == [
        ".gitignore",
        "AGENTS.md",
        "CLAUDE.md",
        "capabilities/__init__.py",
        "pyproject.toml",
    ]
    assert files == snapshot(name="files")
    assert tomllib.loads(files["pyproject.toml"])["tool"]["mir"] == {"capabilities": "capabilities"}
    assert files[".gitignore"] == ".mir/\n"


def test_init_defaults_to_the_current_folder(run_mir, tmp_path):
    result = run_mir("init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pyproject.toml").is_file()


def test_rerunning_init_changes_nothing_and_says_so(run_mir, shop):
    assert run_mir("init", str(shop)).returncode == 0
    before = read_tree(shop)
    result = run_mir("init", str(shop))
    assert result.returncode == 0, result.stderr
    assert read_tree(shop) == before
    assert "files: 5 unchanged" in result.stdout
    assert "already has [tool.mir]" in result.stdout
    assert "already ignores .mir/" in result.stdout


def test_init_adds_tool_mir_to_an_existing_pyproject_without_disturbing_it(run_mir, shop):
    shop.mkdir()
    original = '[project]\nname = "shop"  # mine\n\n[tool.ruff]\nline-length = 88\n'
    (shop / "pyproject.toml").write_text(original)
    (shop / "CLAUDE.md").write_text("my own intent doc\n")
    (shop / ".gitignore").write_text("dist/")
    result = run_mir("init", str(shop))
    assert result.returncode == 0, result.stderr
    assert "pyproject.toml  (update, added [tool.mir])" in result.stdout
    text = (shop / "pyproject.toml").read_text()
    assert text.startswith(original)
    assert tomllib.loads(text)["tool"]["ruff"] == {"line-length": 88}
    assert (shop / "CLAUDE.md").read_text() == "my own intent doc\n"
    assert (shop / ".gitignore").read_text() == "dist/\n.mir/\n"
    assert run_mir("init", str(shop)).returncode == 0
    assert (shop / ".gitignore").read_text().count(".mir") == 1


def test_init_dry_run_writes_nothing(run_mir, shop, snapshot):
    result = run_mir("init", "--dry-run", str(shop))
    assert result.returncode == 0, result.stderr
    assert result.stdout == snapshot
    assert not shop.exists()


def test_a_malformed_pyproject_is_exit_2_naming_the_file(run_mir, shop):
    shop.mkdir()
    (shop / "pyproject.toml").write_text("[project\nname = 1\n")
    result = run_mir("init", str(shop))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {shop / 'pyproject.toml'}: invalid TOML")
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in shop.iterdir()) == ["pyproject.toml"]


def test_init_help_reads_well(run_mir):
    result = run_mir("init", "--help")
    assert result.returncode == 0
    assert "re-running changes nothing" in result.stdout
    assert "--dry-run" in result.stdout
