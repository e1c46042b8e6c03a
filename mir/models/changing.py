"""``mir models rollback`` and ``retire`` as the user asks for them: the project around
the current folder unless one is named, who (``--by``, else the login name) and why
(``--why``), neither holding a secret (both are kept in the history)."""

from __future__ import annotations

from pathlib import Path

from mir.models.domain import ModelEntry, Stage
from mir.models.editing import rollback, set_stage
from mir.models.registration import author, refuse_secret


def project_root(project: Path | None) -> Path:
    """The root of the project at ``project``, else the one around the current folder."""
    from mir.project import find_project

    return find_project(project).root


def rollback_production(
    project: Path | None, name: str, *, by: str | None, why: str | None
) -> ModelEntry:
    """Production goes back to the version before it (why, by default: "rollback")."""
    root, who = project_root(project), author(by)
    return rollback(root, name, by=who, why=refuse_secret("--why", why) or "rollback")


def retire_version(
    project: Path | None, name: str, version: str, *, by: str | None, why: str | None
) -> ModelEntry:
    """Retire a version for good (it stays in the registry for the record)."""
    root, who = project_root(project), author(by)
    why = refuse_secret("--why", why) or ""
    return set_stage(root, name, version, Stage.RETIRED, by=who, why=why)
