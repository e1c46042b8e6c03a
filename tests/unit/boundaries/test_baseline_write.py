"""``--update-baseline`` replaces the committed baseline whole: a failed write keeps the
old one, and a symlinked baseline stays a symlink (its target is written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mir.boundaries.baseline_file import JsonBaselineFile
from mir.boundaries.report import BaselineEntry
from mir.errors import UsageError
from mir.storage import atomic as atomic_module

ENTRY = BaselineEntry(code="MIR101", path="app/a.py", importer=None, imported=None, count=1)


def test_a_failed_write_keeps_the_old_baseline_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lint-baseline.json"
    JsonBaselineFile(path).write([ENTRY])
    before = path.read_bytes()

    def full(_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_module.os, "fsync", full)
    with pytest.raises(UsageError, match="cannot write the baseline: No space"):
        JsonBaselineFile(path).write([])
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lint-baseline.json"]
    assert JsonBaselineFile(path).load() == [ENTRY]


def test_a_symlinked_baseline_is_written_through(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "baseline.json"
    target.write_text(json.dumps({"version": 1, "findings": []}))
    link = tmp_path / "lint-baseline.json"
    link.symlink_to(target)
    JsonBaselineFile(link).write([ENTRY])
    assert link.is_symlink()
    assert JsonBaselineFile(target).load() == [ENTRY]
