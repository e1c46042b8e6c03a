"""The content-hash cache: warm runs parse nothing, and neither does a fresh checkout."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"


def _summary(run_mir, tree: Path, *args: str) -> dict:
    result = run_mir("lint", "boundaries", str(tree), "--format", "json", *args)
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def test_cache_survives_new_mtimes_and_a_fresh_copy(run_mir, tmp_path: Path) -> None:
    tree, cache = tmp_path / "shop", tmp_path / "cache"
    shutil.copytree(FIXTURES / "MIR105", tree)
    cold = _summary(run_mir, tree, "--cache-dir", str(cache))
    files = cold["summary"]["files"]
    assert cold["summary"]["parsed"] == files > 0

    warm = _summary(run_mir, tree, "--cache-dir", str(cache))
    assert (warm["summary"]["parsed"], warm["summary"]["cached"]) == (0, files)
    assert warm["findings"] == cold["findings"]

    for path in tree.rglob("*.py"):  # what a fresh checkout does to every mtime
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    touched = _summary(run_mir, tree, "--cache-dir", str(cache))
    assert touched["summary"]["parsed"] == 0
    assert touched["findings"] == cold["findings"]

    checkout = tmp_path / "checkout"
    shutil.copytree(tree, checkout, copy_function=shutil.copy)  # new mtimes, same content
    copied = _summary(run_mir, checkout, "--cache-dir", str(cache))
    assert copied["summary"]["parsed"] == 0

    domain = checkout / "capabilities" / "audit" / "domain.py"
    domain.write_text(domain.read_text() + "\nfrom capabilities.billing import Invoice\n")
    edited = _summary(run_mir, checkout, "--cache-dir", str(cache))
    assert edited["summary"]["parsed"] == 1
    assert len(edited["findings"]) == len(cold["findings"]) + 1  # audit lacks billing


def test_default_cache_lives_in_dot_mir_and_no_cache_writes_nothing(run_mir, tmp_path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    _summary(run_mir, tree, "--no-cache")
    assert not (tree / ".mir").exists()
    _summary(run_mir, tree)
    assert (tree / ".mir" / "cache").is_dir()
    assert _summary(run_mir, tree)["summary"]["parsed"] == 0


def test_a_damaged_cache_is_ignored(run_mir, tmp_path: Path) -> None:
    tree, cache = tmp_path / "shop", tmp_path / "cache"
    shutil.copytree(FIXTURES / "MIR105", tree)
    first = _summary(run_mir, tree, "--cache-dir", str(cache))
    for path in cache.iterdir():
        path.write_bytes(b"\x00garbage")
    again = _summary(run_mir, tree, "--cache-dir", str(cache))
    assert again["findings"] == first["findings"]
    assert again["summary"]["parsed"] == first["summary"]["files"]
