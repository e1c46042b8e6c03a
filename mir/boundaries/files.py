"""The project on disk: discovering capabilities and modules, reading files and intent docs.

Module names are derived from paths relative to the project root (a leading ``src/``
is dropped); discovery never imports anything.
"""

from __future__ import annotations

import fnmatch
import operator
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mir.boundaries.application import CapabilityDir, Layout, SourceFile
from mir.errors import ConfigError, MirUserError
from mir.storage import identity

if TYPE_CHECKING:
    from mir.boundaries.model import IntentInfo
    from mir.boundaries.settings import LintSettings

INTENT_DOC = "CLAUDE.md"
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".venv", "venv", ".mir"}
_WHERE_LINE = re.compile(r":(\d+)$")
_FIELD = re.compile(r"^(capability|depends_on|public|forbidden|layers|layout)\s*:", re.MULTILINE)


class Excludes(Protocol):
    """All that discovery reads from the settings (a replay of cached findings passes
    the recorded globs without validating ``[tool.mir.lint]`` again)."""

    exclude: list[str]


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

    def layout(self, settings: LintSettings | Excludes) -> Layout:
        folder = (self.root / self.capabilities).resolve()
        if not folder.is_dir() and not self.required:
            return Layout(self.capabilities.replace("/", "."), [], [], frozenset())
        if not folder.is_dir():
            pyproject = self.root / "pyproject.toml"
            raise ConfigError(
                f"capabilities folder '{self.capabilities}' does not exist",
                where=str(pyproject if pyproject.is_file() else self.root),
                hint="create it, or set `capabilities` in the tool.mir table of pyproject.toml",
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
        root_prefix = len(str(self.root)) + 1
        files: list[SourceFile] = []
        # capability -> [has python, has __init__, has doc, bytes of its .md files]
        found: dict[str, list] = {}
        excludes = settings.exclude
        depth = base.count(".") + 1  # dots in a capability's package name

        def walk(folder_path: str, module: str, capability: str | None) -> None:
            # the hot loop of a replayed run (every file of the tree, every run): names
            # and paths are built only for what is kept, excludes only when there are any
            with os.scandir(folder_path) as entries:
                listing = sorted(entries, key=_by_name)
            at_capability_top = capability is not None and module.count(".") == depth
            for entry in listing:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    if name in _SKIP_DIRS or name[0] == ".":
                        continue
                    if excludes and _excluded(_relative(entry.path), excludes):
                        continue
                    inner = capability if capability is not None else name
                    if capability is None:
                        found.setdefault(name, [False, False, False, 0])
                    walk(entry.path, f"{module}.{name}", inner)
                    continue
                if at_capability_top and name == INTENT_DOC:
                    found[capability][2] = True
                if not name.endswith(".py"):
                    if capability is not None and name.endswith(".md"):
                        found[capability][3] += _markdown_size(entry, _relative, excludes)
                    continue
                rel = _relative(entry.path)
                if excludes and _excluded(rel, excludes):
                    continue
                try:
                    stat = entry.stat()
                except OSError:  # a dangling symlink: nothing to lint
                    continue
                is_package = name == "__init__.py"
                if capability is not None:
                    found[capability][0] = True
                    if is_package and at_capability_top:
                        found[capability][1] = True
                files.append(
                    SourceFile(
                        rel,
                        module if is_package else f"{module}.{name[:-3]}",
                        is_package,
                        identity(stat),
                    )
                )

        def _relative(path: str) -> str:
            return path[root_prefix:] if os.sep == "/" else path[root_prefix:].replace(os.sep, "/")

        walk(str(folder), base, None)
        rel_folder = folder.relative_to(self.root).as_posix()
        capabilities = [
            CapabilityDir(
                name,
                f"{rel_folder}/{name}",
                has_init,
                f"{rel_folder}/{name}/{INTENT_DOC}" if has_doc else None,
                markdown,
            )
            for name, (has_python, has_init, has_doc, markdown) in sorted(found.items())
            if has_python or has_doc
        ]
        return Layout(base, files, capabilities, _local_roots(import_root))

    def read(self, path: str) -> bytes:
        try:
            with open(os.path.join(self.root, path), "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise ConfigError(
                f"cannot read: {exc.strerror}", where=path, hint="fix its permissions or exclude it"
            ) from exc

    def intent(self, capability: CapabilityDir) -> IntentInfo | None:
        from mir.boundaries.model import IntentInfo
        from mir.boundaries.prose import split_body
        from mir.contracts import load_intent_doc

        if capability.intent_path is None:
            return None
        path, rel = self.root / capability.intent_path, capability.intent_path
        lines = {}
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            end = text.find("\n---", 3)  # field lines of the front matter only
            front = text if end == -1 else text[:end]
            lines = {m.group(1): text.count("\n", 0, m.start()) + 1 for m in _FIELD.finditer(front)}
            doc = load_intent_doc(path)
            body, body_line = split_body(text)
        except MirUserError as exc:
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            problems = tuple(
                (_line_of(where), text) for where, text in getattr(exc, "problems", ())
            )
            return IntentInfo(rel, None, message, _line_of(exc.where), lines, problems)
        return IntentInfo(rel, doc, None, 1, lines, body=body, body_line=body_line)


_by_name = operator.attrgetter("name")


def _markdown_size(entry: os.DirEntry, relative, excludes: list[str]) -> int:
    """Bytes of a Markdown file of a capability (0 when excluded or unreadable)."""
    if excludes and _excluded(relative(entry.path), excludes):
        return 0
    try:
        return entry.stat().st_size
    except OSError:
        return 0


def _line_of(where: str | None) -> int:
    match = _WHERE_LINE.search(where or "")
    return int(match.group(1)) if match else 1


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
