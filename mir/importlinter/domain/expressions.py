"""Module and import expressions, with import-linter's ``*`` / ``**`` wildcards.

``*`` stands for exactly one module name component and ``**`` for one or more, so
``app.*`` matches ``app.a`` but not ``app.a.b``, and ``app.**`` matches both (never
``app`` itself). The validation messages are import-linter's own, so a user who moves
between the two tools reads the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class ExpressionError(ValueError):
    """An expression import-linter would reject while reading the config."""


_ONE = r"[^.]+"
_MANY = r"[^.]+(?:\.[^.]+)*"


@dataclass(frozen=True, order=True)
class ModuleExpression:
    """A dotted module name, possibly with wildcards standing for whole components."""

    text: str
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> ModuleExpression:
        last_wildcard: str | None = None
        for part in text.split("."):
            if last_wildcard == "**" and part in ("*", "**"):
                raise ExpressionError("A recursive wildcard cannot be followed by a wildcard.")
            if last_wildcard == "*" and part == "**":
                raise ExpressionError("A wildcard cannot be followed by a recursive wildcard.")
            if part in ("*", "**"):
                last_wildcard = part
                continue
            if "*" in part:
                raise ExpressionError("A wildcard can only replace a whole module.")
            last_wildcard = None
        pattern = None
        if "*" in text:
            pieces = [
                _MANY if p == "**" else _ONE if p == "*" else re.escape(p) for p in text.split(".")
            ]
            pattern = re.compile(r"\.".join(pieces))
        return cls(text, pattern)

    @property
    def has_wildcard(self) -> bool:
        return self._pattern is not None

    def matches(self, module: str) -> bool:
        if self._pattern is None:
            return module == self.text
        return self._pattern.fullmatch(module) is not None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, order=True)
class ImportExpression:
    """``importer -> imported``, each side a ModuleExpression (as in ``ignore_imports``)."""

    importer: ModuleExpression
    imported: ModuleExpression

    @classmethod
    def parse(cls, text: str) -> ImportExpression:
        importer, _, imported = text.partition("->")
        importer, imported = importer.strip(), imported.strip()
        if not (importer and imported):
            raise ExpressionError('Must be in the form "package.importer -> package.imported".')
        return cls(ModuleExpression.parse(importer), ModuleExpression.parse(imported))

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported}"
