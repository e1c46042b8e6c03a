"""The project use cases wired to the real pyproject.toml reader (what callers import)."""

from __future__ import annotations

from pathlib import Path

from mir.project import application
from mir.project.adapters import read_tool_table
from mir.project.application import Project


def find_project(start: Path | None = None) -> Project:
    """Walk up from ``start`` (default: cwd) to the nearest pyproject.toml with ``[tool.mir]``."""
    return application.find_project(start, read_tool_table)


def load_project_at(root: Path) -> Project:
    """Load the project whose pyproject.toml is in ``root`` (it must have ``[tool.mir]``)."""
    return application.load_project_at(root, read_tool_table)
