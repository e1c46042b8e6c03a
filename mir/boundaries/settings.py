"""``[tool.mir.lint]`` settings and the per-run options of ``mir lint boundaries``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# mir.contracts.Layer, spelled out so the warm path (a cached run) never imports the
# contract formats; tests/unit/boundaries keeps the two equal.
Layer = Literal["domain", "application", "adapters"]
FORMATS = ("text", "json", "sarif", "github", "junit")

ADAPTER_ONLY = ["litellm", "llama_cpp", "duckdb", "requests", "httpx", "sqlalchemy"]


class LintSettings(BaseModel):
    """The ``[tool.mir.lint]`` table (every key optional)."""

    model_config = ConfigDict(extra="forbid")

    adapter_only: list[str] = Field(
        default_factory=lambda: list(ADAPTER_ONLY),
        description="Modules only the adapters layer may import (I/O, models, databases).",
    )
    domain_allow: list[str] = Field(
        default_factory=lambda: ["pydantic"],
        description="Third-party modules the domain layer may import besides the standard "
        "library and first-party code.",
    )
    forbidden: dict[Layer, list[str]] = Field(
        default_factory=dict,
        description="Extra modules a layer may not import, for every capability.",
    )
    type_checking_imports: bool = Field(
        True, description="Count imports under `if TYPE_CHECKING:` (false: ignore them)."
    )
    syntax_errors: bool = Field(
        True, description="Report files this Python cannot parse (their imports are checked)."
    )
    syntax_checker: Literal["auto", "ruff", "python"] = Field(
        "auto",
        description="What checks syntax: ruff's parser (native, beside the import scan), "
        "CPython's own (slower), or auto: ruff when it is installed.",
    )
    inline_ignores: bool = Field(
        True,
        description="Honour `# mir: ignore[CODE]` comments (false: report every finding, "
        "e.g. so an assistant cannot silence the linter).",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Glob patterns (relative to the project root, POSIX) of files to skip.",
    )
    max_capability_tokens: int | None = Field(
        None,
        gt=0,
        description="Report a capability larger than this many tokens (MIR305): the bytes "
        "of its .py and .md files divided by 4, what one context window must hold to read "
        "it whole. Off by default.",
    )
    cache_dir: str = Field(".mir/cache", description="Content-hash cache folder.")
    baseline: str | None = Field(
        None, description="Baseline file used when --baseline is not given."
    )


@dataclass(frozen=True)
class LintOptions:
    """What one run was asked to do (command-line options, already validated)."""

    use_cache: bool = True
    cache_dir: Path | None = None  # None: settings.cache_dir under the project root
    baseline: Path | None = None
    update_baseline: bool = False
    workers: int | None = None  # None: decide from the number of files to parse
