"""``diagnose`` wired to the real machine checks (what callers import)."""

from __future__ import annotations

from pathlib import Path

from mir.doctor import application, machine
from mir.doctor.domain import Diagnosis


def diagnose(project: str | Path | None = None) -> Diagnosis:
    """Every check of ``mir doctor``; ``project``: a folder in the project (default: cwd)."""
    return application.diagnose(project, machine)  # type: ignore[arg-type]
