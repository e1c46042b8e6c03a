"""A scaffolding plan in words (what ``mir init`` and ``mir new`` print): the tree's
nodes, each file's note, and the one-line count of what happened or would happen."""

from __future__ import annotations

from mir.scaffold.domain import ChangeKind, FileChange, Plan

_DONE = {
    "create": "created",
    "append": "appended to",
    "update": "updated",
    "unchanged": "unchanged",
}
_PLANNED = {
    "create": "to create",
    "append": "to append to",
    "update": "to update",
    "unchanged": "unchanged",
}


def change_note(change: FileChange, *, dry_run: bool) -> str:
    """``(create)``, ``(would append, <note>)``: what happens to one file of the plan."""
    verb = change.kind.value
    if dry_run and change.kind is not ChangeKind.KEEP:
        verb = f"would {verb}"
    note = f", {change.note}" if change.note else ""
    return f"({verb}{note})"


Node = tuple[tuple[str, ...], tuple[str, ...], str]


def plan_nodes(plan: Plan, *, dry_run: bool) -> list[Node]:
    """The plan as a file tree, in drawing order: ``(parent, node, label)`` for each
    folder (``name/``, before its first file) and each file (with its ``change_note``);
    a node is its path's parts, the root ``()``."""
    nodes: list[Node] = []
    folders: set[tuple[str, ...]] = set()
    for change in sorted(plan.changes, key=lambda c: c.path.parts):
        parts = change.path.parts
        for depth in range(1, len(parts)):
            if (key := parts[:depth]) not in folders:
                folders.add(key)
                nodes.append((key[:-1], key, f"{key[-1]}/"))
        nodes.append((parts[:-1], parts, f"{parts[-1]}  {change_note(change, dry_run=dry_run)}"))
    return nodes


def plan_summary(plan: Plan, *, dry_run: bool) -> str:
    """``files: 9 created, 1 unchanged`` (``to create`` in a dry run)."""
    labels = _PLANNED if dry_run else _DONE
    counts = [(kind, sum(c.kind.value == kind for c in plan.changes)) for kind in labels]
    return "files: " + ", ".join(f"{n} {labels[kind]}" for kind, n in counts if n)
