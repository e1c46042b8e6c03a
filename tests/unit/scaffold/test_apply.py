"""Applying a plan: all targets checked first, then everything written or nothing."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from mir.errors import UsageError
from mir.scaffold.application import apply, conflicts
from mir.scaffold.domain import ChangeKind, FileChange, Plan
from tests.unit.scaffold.fakes import MemoryWorkspace

ROOT = Path("/proj")


def plan(*changes: FileChange) -> Plan:
    return Plan(title="test", root=ROOT, changes=changes)


def create(path: str, text: str = "new\n") -> FileChange:
    return FileChange(PurePosixPath(path), ChangeKind.CREATE, text)


def append(path: str, before: str, text: str) -> FileChange:
    return FileChange(PurePosixPath(path), ChangeKind.APPEND, text, before)


def test_everything_is_written():
    workspace = MemoryWorkspace({ROOT / "d.py": "a\n"})
    apply(plan(create("x/a.py"), append("d.py", "a\n", "a\nb\n")), workspace)
    assert workspace.files == {ROOT / "x/a.py": "new\n", ROOT / "d.py": "a\nb\n"}


def test_one_existing_target_means_nothing_is_written():
    workspace = MemoryWorkspace({ROOT / "b.py": "mine\n"})
    with pytest.raises(UsageError, match=r"refusing to overwrite: b.py exists") as info:
        apply(plan(create("a.py"), create("b.py"), create("c.py")), workspace)
    assert "nothing was written" in (info.value.hint or "")
    assert workspace.writes == []
    assert workspace.files == {ROOT / "b.py": "mine\n"}


def test_a_file_changed_since_planning_is_a_conflict():
    workspace = MemoryWorkspace({ROOT / "d.py": "edited meanwhile\n"})
    assert conflicts(plan(append("d.py", "a\n", "a\nb\n")), workspace) == [
        "d.py changed since it was read"
    ]


def test_several_conflicts_are_counted():
    workspace = MemoryWorkspace({ROOT / "a.py": "", ROOT / "b.py": ""})
    with pytest.raises(UsageError, match=r"a.py exists \(\+1 more\)"):
        apply(plan(create("a.py"), create("b.py")), workspace)


def test_a_failed_write_undoes_the_writes_before_it():
    workspace = MemoryWorkspace({ROOT / "d.py": "a\n"}, fail_on=ROOT / "c.py")
    with pytest.raises(OSError, match="disk full"):
        apply(plan(create("a.py"), append("d.py", "a\n", "a\nb\n"), create("c.py")), workspace)
    assert workspace.files == {ROOT / "d.py": "a\n"}


def test_kept_files_are_not_touched():
    workspace = MemoryWorkspace({ROOT / "CLAUDE.md": "mine"})
    keep = FileChange(PurePosixPath("CLAUDE.md"), ChangeKind.KEEP, note="exists")
    apply(plan(keep), workspace)
    assert workspace.writes == []
