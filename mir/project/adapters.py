"""Reading pyproject.toml (stdlib tomllib; writing lives with the scaffold capability)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from mir.errors import ConfigError


def read_tool_table(pyproject: Path) -> dict[str, Any] | None:
    """The ``[tool.mir]`` table of ``pyproject``, or None when the file or table is absent."""
    if not pyproject.is_file():
        return None
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", where=str(pyproject)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError("file is not valid UTF-8", where=str(pyproject)) from exc
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError("[tool] must be a table", where=str(pyproject))
    table = tool.get("mir")
    if table is not None and not isinstance(table, dict):
        raise ConfigError("[tool.mir] must be a table", where=str(pyproject))
    return table
