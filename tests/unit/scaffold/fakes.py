"""Hand-written fakes of the scaffold ports: an in-memory disk and recording templates."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from mir.errors import ConfigError


class MemoryWorkspace:
    """Files in a dict; ``fail_on`` makes writing that path raise, to test the undo."""

    def __init__(self, files: Mapping[Path, str] | None = None, fail_on: Path | None = None):
        self.files: dict[Path, str] = dict(files or {})
        self.fail_on = fail_on
        self.writes: list[Path] = []

    def read_text(self, path: Path) -> str | None:
        return self.files.get(path)

    def create(self, path: Path, text: str) -> None:
        if path in self.files:
            raise FileExistsError(path)
        self._write(path, text)

    def replace(self, path: Path, text: str) -> None:
        self._write(path, text)

    def remove(self, path: Path) -> None:
        self.files.pop(path, None)

    def _write(self, path: Path, text: str) -> None:
        if path == self.fail_on:
            raise OSError(f"disk full: {path}")
        self.writes.append(path)
        self.files[path] = text


class EchoTemplates:
    """Renders every template as a line naming it and its variables, and records calls."""

    def __init__(self) -> None:
        self.rendered: list[str] = []

    def render(self, name: str, variables: Mapping[str, Any]) -> str:
        self.rendered.append(name)
        return f"# {name} {dict(sorted(variables.items()))}\n"


class FakeEditor:
    """A pyproject "editor" that understands one marker line instead of TOML."""

    def tool_mir(self, text: str, where: str) -> dict[str, Any] | None:
        if "BROKEN" in text:
            raise ConfigError("invalid TOML", where=where)
        return {"capabilities": "src/caps"} if "[tool.mir]" in text else None

    def add_tool_mir(self, text: str, settings: Mapping[str, Any], where: str) -> str:
        return f"{text}[tool.mir] {dict(settings)}\n"


class AcceptAll:
    def __init__(self) -> None:
        self.checked: list[PurePosixPath] = []

    def check(self, path: PurePosixPath, text: str) -> None:
        self.checked.append(path)


class RejectPython:
    def check(self, path: PurePosixPath, text: str) -> None:
        if path.suffix == ".py":
            raise ConfigError("not valid Python", where=f"rendered {path}")
