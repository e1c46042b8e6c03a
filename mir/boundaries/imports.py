"""What an import statement *is*, and the ``ast``-based reference extractor.

``extract_imports_ast`` is the slow, obviously-correct reference: the fast extractor
used in production must return exactly the same ``ImportRef`` list (a differential test
holds them together). Pure functions over source text: stdlib only, no file I/O.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ImportRef:
    """One imported module as written in one statement, resolved to an absolute name.

    ``from a.b import c, d`` gives one ImportRef with ``module="a.b"``, ``names=("c", "d")``
    (whether ``a.b.c`` is a module is decided later, against the module table);
    ``import a.b, e`` gives two, with ``names=()``.
    """

    module: str
    names: tuple[str, ...]
    line: int
    column: int
    type_checking: bool = False
    # relative import that climbs above the top-level package: ``module`` is unresolved
    beyond_top: bool = False


def resolve_relative(
    module: str | None, level: int, importer: str, is_package: bool
) -> tuple[str, bool]:
    """Absolute name for ``from <level dots><module> import ...`` inside ``importer``.

    Returns ``(name, beyond_top)``; ``beyond_top`` is True when the dots climb above the
    importer's top-level package (a bug in the user's code that we report, not crash on).
    """
    if level == 0:
        return module or "", False
    package_parts = importer.split(".") if is_package else importer.split(".")[:-1]
    if level - 1 > len(package_parts) - 1 or not package_parts:
        return "." * level + (module or ""), True
    base = package_parts[: len(package_parts) - (level - 1)]
    return ".".join([*base, *([module] if module else [])]), False


def _is_type_checking_test(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


class _Collector(ast.NodeVisitor):
    def __init__(self, importer: str, is_package: bool) -> None:
        self.importer = importer
        self.is_package = is_package
        self.refs: list[ImportRef] = []
        self._type_checking = 0

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking_test(node.test):
            self._type_checking += 1
            for child in node.body:
                self.visit(child)
            self._type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.refs.append(
                ImportRef(alias.name, (), node.lineno, node.col_offset, self._type_checking > 0)
            )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        name, beyond = resolve_relative(node.module, node.level, self.importer, self.is_package)
        names = tuple(alias.name for alias in node.names)
        self.refs.append(
            ImportRef(name, names, node.lineno, node.col_offset, self._type_checking > 0, beyond)
        )


def extract_imports_ast(source: str | bytes, importer: str, is_package: bool) -> list[ImportRef]:
    """Every import in ``source`` (module ``importer``), in source order.

    Raises ``SyntaxError`` when the source does not parse with this interpreter.
    """
    tree = ast.parse(source)
    collector = _Collector(importer, is_package)
    collector.visit(tree)
    return sorted(collector.refs, key=lambda ref: (ref.line, ref.column))
