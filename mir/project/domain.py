"""Project settings: the ``[tool.mir]`` table of a project's pyproject.toml.

Each capability owns the schema of its own sub-table (``[tool.mir.lint]``,
``[tool.mir.model]`` ...) and validates it through ``Project.section``, so this module
never has to know about lint rules or model routes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class MirSettings(BaseModel):
    """Top level of ``[tool.mir]``."""

    model_config = ConfigDict(extra="forbid")

    capabilities: str = Field(
        "capabilities", description="Folder (relative to the project root) holding capabilities."
    )
    shared: list[str] = Field(
        default_factory=list,
        description="Modules every capability may import (a shared kernel), e.g. 'app.errors'.",
    )
    templates: str | None = Field(
        None, description="Folder of jinja2 templates overriding mir's scaffolding templates."
    )
    state_dir: str = Field(".mir", description="Local, git-ignored state: traces, caches.")
    lint: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.lint] settings.")
    model: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.model] defaults.")
    traces: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.traces] settings.")
    eval: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.eval] settings.")


def describe_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """One line naming the first offending field, e.g. ``lint.forbidden: Input should be ...``.

    One line on purpose: the CLI contract is one error line, and the first error is the
    one to fix first.
    """
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ()))
    field = ".".join(part for part in (prefix, loc) if part)
    more = len(exc.errors()) - 1
    suffix = f" (+{more} more)" if more else ""
    return f"{field or '<root>'}: {first['msg']}{suffix}"
