"""Replaying cached findings: only when every input the last full run saw is unchanged."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mir.boundaries import FORMATS, LintOptions, LintSettings, lint_boundaries, replay_report
from mir.boundaries import cache as cache_module
from mir.boundaries.replay import DEFAULT_CACHE_DIR
from mir.cli import lint_direct

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lint" / "rules"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", root)
    return root


def _full(tree: Path, cache: Path):
    return lint_boundaries(tree, LintOptions(cache_dir=cache, workers=1))


def test_an_unchanged_project_is_replayed_with_the_same_findings(tree: Path, tmp_path) -> None:
    cache = tmp_path / "cache"
    full = _full(tree, cache)
    assert full.findings  # the fixture has a capability cycle
    replayed = replay_report(tree, cache)
    assert replayed is not None
    assert replayed.findings == full.findings
    assert (replayed.stats.files, replayed.stats.capabilities) == (
        full.stats.files,
        full.stats.capabilities,
    )
    assert (replayed.stats.parsed, replayed.stats.cached) == (0, full.stats.files)


def test_nothing_to_replay_without_a_full_run(tree: Path, tmp_path: Path) -> None:
    assert replay_report(tree, tmp_path / "cache") is None


def test_new_mtimes_with_the_same_content_are_still_a_replay(tree: Path, tmp_path) -> None:
    cache = tmp_path / "cache"
    full = _full(tree, cache)
    for path in tree.rglob("*.py"):  # a fresh checkout
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    replayed = replay_report(tree, cache)
    assert replayed is not None and replayed.findings == full.findings


@pytest.mark.parametrize(
    "change",
    [
        "edit a module",
        "add a module",
        "delete a module",
        "edit an intent doc",
        "edit pyproject",
        "add a top-level package",
    ],
)
def test_any_changed_input_means_a_full_run(tree: Path, tmp_path: Path, change: str) -> None:
    cache = tmp_path / "cache"
    _full(tree, cache)
    audit = tree / "capabilities" / "audit"
    if change == "edit a module":
        domain = audit / "domain.py"
        domain.write_text(domain.read_text() + "\n# same imports, new content\n")
    elif change == "add a module":
        (audit / "application.py").write_text("import json\n")
    elif change == "delete a module":
        (audit / "domain.py").unlink()
    elif change == "edit an intent doc":
        doc = audit / "CLAUDE.md"
        doc.write_text(doc.read_text() + "\nOne more line.\n")
    elif change == "edit pyproject":
        pyproject = tree / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + "\n[tool.mir.lint]\nexclude = []\n")
    else:
        (tree / "other").mkdir()
    assert replay_report(tree, cache) is None


def test_a_changed_linter_means_a_full_run(tree, tmp_path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    _full(tree, cache)
    monkeypatch.setattr(cache_module, "_FINGERPRINT", ["a different linter"])
    assert replay_report(tree, cache) is None


def test_a_replay_applies_the_baseline_of_the_settings(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.mir.lint]\nbaseline = "base.json"\n')
    written = lint_boundaries(tree, LintOptions(cache_dir=cache, update_baseline=True, workers=1))
    assert written.baselined and not written.findings
    replayed = replay_report(tree, cache)
    assert replayed is not None
    assert replayed.baselined == written.baselined and not replayed.findings
    assert replayed.baseline_path == (tree / "base.json").as_posix()


def test_the_default_cache_folder_and_cache_dir_setting(tree: Path) -> None:
    assert LintSettings().cache_dir == DEFAULT_CACHE_DIR
    lint_boundaries(tree, LintOptions(workers=1))
    assert replay_report(tree) is not None  # found in .mir/cache without validation
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.mir.lint]\ncache_dir = "build/c"\n')
    assert replay_report(tree) is None  # pyproject changed
    lint_boundaries(tree, LintOptions(workers=1))
    assert (tree / "build" / "c").is_dir()
    # the new top-level folder "build" is a first-party name the first run did not see
    assert replay_report(tree) is None
    lint_boundaries(tree, LintOptions(workers=1))
    assert replay_report(tree) is not None


def test_the_cli_knows_every_format() -> None:
    assert lint_direct.FORMATS == FORMATS


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["lint", "boundaries"], {}),
        (["lint", "boundaries", "src", "-f", "json"], {"root": "src", "fmt": "json"}),
        (
            ["lint", "boundaries", "--cache-dir=c", "--baseline", "b.json", "."],
            {"cache_dir": "c", "baseline": "b.json", "root": "."},
        ),
        (["lint", "boundaries", "--format", "sarif"], {"fmt": "sarif"}),
        (["lint", "boundaries", "--no-cache"], {"no_cache": "1"}),
        (["lint", "boundaries", "--config", "x.ini"], {"config": "x.ini"}),
    ],
)
def test_plain_invocations_are_replayable(argv: list[str], expected: dict) -> None:
    assert lint_direct.parse_arguments(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["lint", "rules"],
        ["--debug", "lint", "boundaries"],
        ["lint", "boundaries", "--help"],
        ["lint", "boundaries", "--watch"],
        ["lint", "boundaries", "--no-cache", "--no-cache"],
        ["lint", "boundaries", "--update-baseline"],
        ["lint", "boundaries", "--config", "x.ini", "--config=y.ini"],
        ["lint", "boundaries", "a", "b"],
        ["lint", "boundaries", "-f", "json", "-f", "text"],
        ["lint", "boundaries", "--format"],
        ["lint", "boundaries", "-fjson"],
        ["lint", "boundaries", "--", "src"],
    ],
)
def test_anything_else_goes_to_the_full_command(argv: list[str]) -> None:
    assert lint_direct.parse_arguments(argv) is None
