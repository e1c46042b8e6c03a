"""What scaffolding produces, as data: name rules and the plan of file changes.

A plan is computed completely (every file rendered, every target checked) before a
single byte is written; writing is a separate step that either applies all of it or
none of it. Keeping the plan as plain data is what makes ``--dry-run`` honest: it
prints exactly what the real run would write.
"""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

from mir.errors import UsageError

# The layer modules of every capability: a capability or agent with one of these names
# would be confused with a layer by the boundary linter and by readers.
LAYER_NAMES = frozenset({"domain", "application", "adapters"})


def normalize_name(raw: str, *, kind: str, module: bool = True) -> str:
    """A capability or agent name as a Python identifier; ``support-desk`` -> ``support_desk``.

    Refuses anything that cannot safely be a package/module name, with the reason:
    the name becomes a folder and an import path, so it must never escape the
    capabilities folder or shadow a module Python already knows. ``module=False`` (an
    action: it only becomes part of a function name and a string value) skips the rules
    that exist because the name becomes a module.
    """
    name = raw.strip()
    if not name:
        raise UsageError(f"{kind} name is empty", hint="pass a name like support_desk")
    if "/" in name or "\\" in name:
        raise UsageError(
            f"{kind} name {raw!r} contains a path separator",
            hint="pass a bare name; it is created inside the capabilities folder",
        )
    if ".." in name or name.startswith("."):
        raise UsageError(f"{kind} name {raw!r} is not a bare name", hint="remove the dots")
    name = name.replace("-", "_")
    if not name.isidentifier():
        raise UsageError(
            f"{kind} name {raw!r} is not a valid Python identifier",
            hint="use letters, digits and underscores (or dashes), not starting with a digit",
        )
    if name.startswith("_"):
        raise UsageError(
            f"{kind} name {raw!r} starts with an underscore",
            hint="it becomes a public package/module name; start with a letter",
        )
    if not module:
        return name
    if keyword.iskeyword(name):
        raise UsageError(
            f"{kind} name {name!r} is a Python keyword", hint="it could never be imported"
        )
    if name in sys.stdlib_module_names:
        raise UsageError(
            f"{kind} name {name!r} shadows the standard-library module {name!r}",
            hint="pick a domain word, e.g. 'order_events' instead of 'json'",
        )
    if name in LAYER_NAMES:
        raise UsageError(
            f"{kind} name {name!r} is a mir layer name (domain/application/adapters)",
            hint="the boundary linter would read it as a layer; pick a domain word",
        )
    return name


def pascal_case(name: str) -> str:
    """``support_desk`` -> ``SupportDesk`` (class names derived from a capability/agent)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def import_order(names: Iterable[str]) -> list[str]:
    """``names`` in the order ruff's isort and RUF022 expect: constants, classes, the rest.

    Generated import lists and ``__all__`` must pass ``ruff check`` for any capability
    name, so the order is computed (natural sort: ``Ab2`` before ``Ab10``), not fixed.
    """

    def key(name: str) -> tuple[int, list[Any], str]:
        group = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
        natural = [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name.lower())]
        return group, natural, name

    return sorted(names, key=key)


class ChangeKind(Enum):
    CREATE = "create"  # a new file; it must not exist when the plan is applied
    APPEND = "append"  # text added at the end of an existing file
    UPDATE = "update"  # an existing file rewritten by a structure-aware editor (TOML)
    KEEP = "unchanged"  # exists already; left alone (re-running `mir init`)


@dataclass(frozen=True)
class FileChange:
    """One file the plan touches. ``before`` is what the file held when planned."""

    path: PurePosixPath  # relative to the plan's root
    kind: ChangeKind
    text: str = ""  # the full new content (CREATE, APPEND, UPDATE)
    before: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Plan:
    """Everything one scaffolding command will do, relative to ``root``."""

    title: str
    root: Path
    changes: tuple[FileChange, ...] = field(default_factory=tuple)

    @property
    def writes(self) -> tuple[FileChange, ...]:
        return tuple(c for c in self.changes if c.kind is not ChangeKind.KEEP)

    def target(self, change: FileChange) -> Path:
        return self.root.joinpath(*change.path.parts)
