"""Finding the project a command runs in, and reading its settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mir.errors import ConfigError
from mir.project.domain import MirSettings, describe_validation_error

SectionT = TypeVar("SectionT", bound=BaseModel)


class ToolTableReader(Protocol):
    """Port: the ``[tool.mir]`` table of a pyproject.toml, or None when absent."""

    def __call__(self, pyproject: Path) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Project:
    """A mir project: its root folder, its pyproject.toml and validated settings."""

    root: Path
    pyproject: Path
    settings: MirSettings

    @property
    def capabilities_dir(self) -> Path:
        return self.root / self.settings.capabilities

    @property
    def state_dir(self) -> Path:
        return self.root / self.settings.state_dir

    def section(self, name: str, model: type[SectionT]) -> SectionT:
        """Validate the ``[tool.mir.<name>]`` sub-table with the owning capability's model."""
        raw = getattr(self.settings, name)
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(
                describe_validation_error(exc, prefix=f"tool.mir.{name}", model=model),
                where=str(self.pyproject),
            ) from exc


def load_project_at(root: Path, read_table: ToolTableReader) -> Project:
    """Load the project whose pyproject.toml is in ``root`` (it must have ``[tool.mir]``)."""
    pyproject = root / "pyproject.toml"
    table = read_table(pyproject)
    if table is None:
        raise ConfigError(
            "no [tool.mir] table", where=str(pyproject), hint="run `mir init` to add one"
        )
    try:
        settings = MirSettings.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(
            describe_validation_error(exc, prefix="tool.mir", model=MirSettings),
            where=str(pyproject),
        ) from exc
    return Project(root=root.resolve(), pyproject=pyproject, settings=settings)


def find_project(start: Path | None, read_table: ToolTableReader) -> Project:
    """Walk up from ``start`` (default: cwd) to the nearest pyproject.toml with ``[tool.mir]``."""
    here = (start or Path.cwd()).resolve()
    if start is not None and not here.exists():
        # a misspelled --project inside a project would otherwise find the project
        # around it and quietly act there
        raise ConfigError(
            f"folder not found: {start}", hint="check the path given as the project folder"
        )
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and read_table(candidate) is not None:
            return load_project_at(folder, read_table)
    raise NoProjectFound(here, from_cwd=start is None)


class NoProjectFound(ConfigError):
    """No ``[tool.mir]`` in the folder or above. The hint names no option: the command
    that met it knows whether it takes ``--project`` (the CLI adds it then)."""

    def __init__(self, here: Path, *, from_cwd: bool):
        hint = (
            "run it inside a mir project, or `mir init` to make this folder one"
            if from_cwd
            else "give a folder inside the project, or `mir init` that folder first"
        )
        super().__init__(
            f"no mir project found in {here} or any parent (no pyproject.toml with [tool.mir])",
            hint=hint,
        )
        self.from_cwd = from_cwd

    # what the hint says instead where the command takes --project (the CLI knows which)
    OPTION_HINT = (
        "run it inside a mir project or pass its folder with --project DIR (`mir init` makes one)"
    )
