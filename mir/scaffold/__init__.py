"""Scaffolding: ``mir init``, ``mir new capability``, ``mir new agent`` (public interface)."""

from mir.scaffold.application import DEFAULT_ACTIONS
from mir.scaffold.domain import ChangeKind, FileChange, Plan, normalize_name
from mir.scaffold.entrypoints import init_project, new_agent, new_capability, scaffold_demo
from mir.scaffold.wording import change_note, plan_nodes, plan_summary

__all__ = [
    "DEFAULT_ACTIONS",
    "ChangeKind",
    "FileChange",
    "Plan",
    "change_note",
    "init_project",
    "new_agent",
    "new_capability",
    "normalize_name",
    "plan_nodes",
    "plan_summary",
    "scaffold_demo",
]
