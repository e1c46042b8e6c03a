"""Composition: each use case wired to the production adapters (one function per command).

Tests build the same use cases from ``application`` with fakes; the CLI and
``examples/demo.py`` call these.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mir.project import Project, find_project
from mir.scaffold.adapters import DiskWorkspace, GeneratedFileCheck, JinjaTemplates, TomlkitEditor
from mir.scaffold.application import (
    DEFAULT_ACTIONS,
    apply,
    ensure_applicable,
    plan_agent,
    plan_capability,
    plan_init,
)
from mir.scaffold.domain import Plan
from mir.storage import output_folder


def init_project(folder: Path, *, dry_run: bool = False) -> Plan:
    """``mir init``: make ``folder`` (created if needed) a mir project; safe to re-run."""
    output_folder(folder, "FOLDER", parents=True)
    workspace = DiskWorkspace()
    plan = plan_init(
        folder,
        templates=JinjaTemplates(),
        workspace=workspace,
        editor=TomlkitEditor(),
        check=GeneratedFileCheck(),
    )
    return _finish(plan, workspace, dry_run)


def new_capability(
    name: str,
    *,
    start: Path | None = None,
    templates: Path | None = None,
    dry_run: bool = False,
) -> Plan:
    """``mir new capability``: a vertical slice in the project found from ``start`` (cwd)."""
    project = find_project(start)
    plan = plan_capability(
        project.root,
        project.settings.capabilities,
        name,
        templates=_templates(project, templates),
        check=GeneratedFileCheck(),
    )
    return _finish(plan, DiskWorkspace(), dry_run)


def new_agent(
    capability: str,
    name: str,
    *,
    actions: Sequence[str] = DEFAULT_ACTIONS,
    start: Path | None = None,
    templates: Path | None = None,
    dry_run: bool = False,
) -> Plan:
    """``mir new agent``: a responsibility contract and everything it refers to."""
    project = find_project(start)
    workspace = DiskWorkspace()
    plan = plan_agent(
        project.root,
        project.settings.capabilities,
        capability,
        name,
        actions=actions,
        templates=_templates(project, templates),
        workspace=workspace,
        check=GeneratedFileCheck(),
    )
    return _finish(plan, workspace, dry_run)


def scaffold_demo(
    folder: Path,
    *,
    capability: str = "support_desk",
    agent: str = "triage",
    actions: Sequence[str] = ("reply", "escalate"),
) -> tuple[Plan, Plan, Plan]:
    """A small demo project in ``folder``: init + one capability + one agent."""
    return (
        init_project(folder),
        new_capability(capability, start=folder),
        new_agent(capability, agent, actions=actions, start=folder),
    )


def _templates(project: Project, override: Path | None) -> JinjaTemplates:
    if override is None and project.settings.templates:
        override = project.root / project.settings.templates
    return JinjaTemplates(override)


def _finish(plan: Plan, workspace: DiskWorkspace, dry_run: bool) -> Plan:
    if dry_run:
        ensure_applicable(plan, workspace)  # a dry run fails exactly where the real one would
    else:
        apply(plan, workspace)
    return plan
