"""A finding: one broken rule at one place. Findings are data, never exceptions."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation. ``path`` is relative to the lint root, in POSIX form.

    ``importer``/``imported`` are dotted module names when the finding is about an
    import; ``contract`` names the import-linter contract for compatibility findings.
    """

    code: str
    path: str
    line: int
    column: int
    message: str
    rule: str
    capability: str | None = None
    importer: str | None = None
    imported: str | None = None
    contract: str | None = None

    def as_dict(self) -> dict[str, Any]:
        # field by field: dataclasses.asdict deep-copies recursively, ~10x slower
        return {name: getattr(self, name) for name in _FIELDS}

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)


_FIELDS = tuple(field.name for field in fields(Finding))
