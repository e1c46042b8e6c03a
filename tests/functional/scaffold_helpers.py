"""Shared by the scaffold functional tests: read a generated tree back as data."""

from __future__ import annotations

from pathlib import Path


def read_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative POSIX path -> text), caches excluded."""
    skip = {"__pycache__", ".pytest_cache", ".ruff_cache"}
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and not skip.intersection(path.relative_to(root).parts)
    }
