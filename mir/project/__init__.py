"""Project discovery and ``[tool.mir]`` settings (public interface)."""

from mir.project.application import Project
from mir.project.domain import MirSettings, describe_validation_error, known_keys
from mir.project.entrypoints import find_project, load_project_at

__all__ = [
    "MirSettings",
    "Project",
    "describe_validation_error",
    "find_project",
    "known_keys",
    "load_project_at",
]
