"""One file in, everything the rules need out: imports, parse problem, exported names.

Pure and picklable (plain tuples), so it runs the same in a worker process and its
result can be stored in the content-hash cache.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mir.boundaries.scan import (
    IgnoreRow,
    ImportRow,
    check_syntax,
    decode_source,
    scan_ignores,
    scan_imports,
)


@dataclass(frozen=True, slots=True)
class ParseJob:
    path: str
    module: str
    is_package: bool
    want_exports: bool
    source: bytes
    check_syntax: bool = True


@dataclass(frozen=True, slots=True)
class Parsed:
    """What one file's content parsed to, as plain tuples (cheap to cache and to ship
    between processes): import rows in ``ImportRef`` field order, the parse problem as
    ``(line, column, message)``, the exported names of a package ``__init__``, the
    ``# mir: ignore[...]`` comments as ``(line, codes)``."""

    imports: tuple[ImportRow, ...]
    problem: tuple[int, int, str] | None
    exports: tuple[str, ...] | None
    ignores: tuple[IgnoreRow, ...] = ()

    def to_plain(self) -> tuple:
        return self.imports, self.problem, self.exports, self.ignores

    @classmethod
    def from_plain(cls, plain: tuple) -> Parsed:
        return cls(*plain)


def parse_job(job: ParseJob) -> Parsed:
    """Imports (even from a file that does not parse), the parse problem, the exports."""
    try:
        text = decode_source(job.source)
    except SyntaxError as exc:
        return Parsed((), (exc.lineno or 1, 0, str(exc.msg)), None)
    imports = tuple(scan_imports(text, job.module, job.is_package))
    error = check_syntax(text, job.path) if job.check_syntax else None
    problem = None
    if error is not None:
        problem = (error.lineno or 1, max((error.offset or 1) - 1, 0), str(error.msg))
    exports = None
    if job.want_exports and error is None:
        try:
            exports = exported_names(text)
        except SyntaxError:  # syntax checking switched off and the file is broken
            exports = None
    return Parsed(imports, problem, exports, scan_ignores(text))


def parse_jobs(jobs: list[ParseJob]) -> list[Parsed]:
    return [parse_job(job) for job in jobs]


def syntax_problems(files: list[tuple[str, bytes]]) -> list[tuple[int, int, str] | None]:
    """The parse problem of each ``(path, source)``: the half of ``parse_job`` that a
    worker process can do while the main process scans imports."""
    problems: list[tuple[int, int, str] | None] = []
    for path, source in files:
        error = check_syntax(source, path)
        if error is None:
            problems.append(None)
        else:
            problems.append((error.lineno or 1, max((error.offset or 1) - 1, 0), str(error.msg)))
    return problems


def exported_names(text: str) -> tuple[str, ...]:
    """Names a package ``__init__`` exports: its literal ``__all__``, else every public
    name bound at module level (imports, defs, classes, assignments)."""
    tree = ast.parse(text)
    declared: list[str] | None = None
    bound: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if "__all__" in names and isinstance(node.value, (ast.List, ast.Tuple)):
                values = [
                    e.value
                    for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                extend = isinstance(node, ast.AugAssign) and declared is not None
                declared = [*(declared or []), *values] if extend else values
            bound.extend(names)
        elif isinstance(node, ast.Import):
            bound.extend((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            bound.extend(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.append(node.name)
    if declared is not None:
        return tuple(sorted(set(declared)))
    return tuple(sorted({name for name in bound if not name.startswith("_")}))
