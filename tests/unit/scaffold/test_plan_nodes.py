"""A plan's tree in drawing order: each folder once, before its first file."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from mir.scaffold import ChangeKind, FileChange, Plan, plan_nodes


def test_folders_come_once_before_their_files_in_path_order() -> None:
    changes = [
        FileChange(path=PurePosixPath("b/y.py"), kind=ChangeKind.CREATE),
        FileChange(path=PurePosixPath("a.md"), kind=ChangeKind.CREATE),
        FileChange(path=PurePosixPath("b/c/z.py"), kind=ChangeKind.CREATE),
        FileChange(path=PurePosixPath("b/x.py"), kind=ChangeKind.CREATE),
    ]
    nodes = plan_nodes(Plan(title="t", root=Path("."), changes=tuple(changes)), dry_run=True)
    assert [(parent, label.split()[0]) for parent, _, label in nodes] == [
        ((), "a.md"),
        ((), "b/"),
        (("b",), "c/"),
        (("b", "c"), "z.py"),
        (("b",), "x.py"),
        (("b",), "y.py"),
    ]
    assert nodes[0][2] == "a.md  (would create)"
