"""Project discovery and ``[tool.mir]`` settings (public interface)."""

from mir.project.application import Project, find_project, load_project_at
from mir.project.domain import MirSettings, describe_validation_error

__all__ = ["MirSettings", "Project", "describe_validation_error", "find_project", "load_project_at"]
