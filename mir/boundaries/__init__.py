"""Boundary linting: the import extractors, findings and ``lint_boundaries`` (public)."""

from mir.boundaries.findings import Finding
from mir.boundaries.imports import ImportRef, extract_imports_ast, resolve_relative
from mir.boundaries.scan import check_syntax, decode_source, extract_imports

__all__ = [
    "Finding",
    "ImportRef",
    "check_syntax",
    "decode_source",
    "extract_imports",
    "extract_imports_ast",
    "resolve_relative",
]
