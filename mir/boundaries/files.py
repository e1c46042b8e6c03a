"""The project on disk: discovering capabilities and modules, reading files and intent docs.

Module names are derived from paths relative to the project root (a leading ``src/``
is dropped); discovery never imports anything.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from mir.boundaries.application import CapabilityDir, Layout, SourceFile
from mir.boundaries.model import IntentInfo
from mir.boundaries.settings import LintSettings
from mir.errors import ConfigError, MirUserError

INTENT_DOC = "CLAUDE.md"
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".venv", "venv", ".mir"}
_WHERE_LINE = re.compile(r":(\d+)$")
_FIELD = re.compile(r"^(capability|depends_on|public|forbidden|layers)\s*:", re.MULTILINE)


class FileSystemSource:
    """``ProjectSource`` over a folder: the capabilities root named in ``[tool.mir]``."""

    def __init__(self, root: Path, capabilities: str, required: bool = True) -> None:
        self.root = root
        self.capabilities = capabilities
        self.required = required

    def _import_root(self, folder: Path) -> Path:
        relative = folder.relative_to(self.root)
        if relative.parts and relative.parts[0] == "src":
            return self.root / "src"
        return self.root

    def layout(self, settings: LintSettings) -> Layout:
        folder = (self.root / self.capabilities).resolve()
        if not folder.is_dir() and not self.required:
            return Layout(self.capabilities.replace("/", "."), [], [], frozenset())
        if not folder.is_dir():
            raise ConfigError(
                f"capabilities folder '{self.capabilities}' does not exist",
                where=str(self.root / "pyproject.toml"),
                hint="set [tool.mir] capabilities to the folder holding your capabilities",
            )
        try:
            folder.relative_to(self.root)
        except ValueError:
            raise ConfigError(
                f"capabilities folder '{self.capabilities}' is outside the project",
                where=str(self.root / "pyproject.toml"),
            ) from None
        import_root = self._import_root(folder)
        base_parts = folder.relative_to(import_root).parts
        if not base_parts:
            raise ConfigError(
                "capabilities must be a folder below the project root, not the root itself",
                where=str(self.root / "pyproject.toml"),
            )
        base = ".".join(base_parts)
        files: list[SourceFile] = []
        capabilities: list[CapabilityDir] = []
        excludes = settings.exclude
        for dirpath, dirnames, filenames in os.walk(folder):
            here = Path(dirpath)
            rel_dir = here.relative_to(self.root).as_posix()
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in _SKIP_DIRS
                and not d.startswith(".")
                and not _excluded(f"{rel_dir}/{d}", excludes)
            )
            module_parts = here.relative_to(import_root).parts
            if here == folder:
                for name in dirnames:
                    sub = here / name
                    if (
                        (sub / "__init__.py").is_file()
                        or _has_python(sub)
                        or (sub / INTENT_DOC).is_file()
                    ):
                        capabilities.append(
                            CapabilityDir(
                                name, f"{rel_dir}/{name}", (sub / "__init__.py").is_file()
                            )
                        )
            for filename in sorted(filenames):
                if not filename.endswith(".py"):
                    continue
                rel = f"{rel_dir}/{filename}"
                if _excluded(rel, excludes):
                    continue
                stat = os.stat(here / filename)
                is_package = filename == "__init__.py"
                parts = module_parts if is_package else (*module_parts, filename[:-3])
                files.append(
                    SourceFile(rel, ".".join(parts), is_package, (stat.st_mtime_ns, stat.st_size))
                )
        return Layout(base, files, capabilities, _local_roots(import_root))

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def intent(self, capability: CapabilityDir) -> IntentInfo | None:
        from mir.contracts import load_intent_doc

        path = self.root / capability.path / INTENT_DOC
        if not path.is_file():
            return None
        rel = f"{capability.path}/{INTENT_DOC}"
        lines = {}
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = {m.group(1): text.count("\n", 0, m.start()) + 1 for m in _FIELD.finditer(text)}
            doc = load_intent_doc(path)
        except MirUserError as exc:
            match = _WHERE_LINE.search(exc.where or "")
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            return IntentInfo(rel, None, message, int(match.group(1)) if match else 1, lines)
        return IntentInfo(rel, doc, None, 1, lines)


def _has_python(folder: Path) -> bool:
    return any(folder.rglob("*.py"))


def _excluded(rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern in patterns)


def _local_roots(import_root: Path) -> frozenset[str]:
    """Top-level first-party names: packages and modules directly in the import root."""
    names = set()
    for entry in os.scandir(import_root):
        if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
            continue
        if entry.is_file() and entry.name.endswith(".py"):
            names.add(entry.name[:-3])
        elif entry.is_dir() and entry.name.isidentifier():
            names.add(entry.name)
    return frozenset(names)
