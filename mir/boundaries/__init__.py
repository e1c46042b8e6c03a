"""Boundary linting: the import extractors, findings and ``lint_boundaries`` (public)."""

from mir.boundaries.composition import lint_boundaries, load_lint_project
from mir.boundaries.findings import Finding
from mir.boundaries.formats import FORMATS, render
from mir.boundaries.imports import ImportRef, extract_imports_ast, resolve_relative
from mir.boundaries.report import BaselineEntry, LintReport, LintStats
from mir.boundaries.rules import RuleInfo, all_rules, rule_for
from mir.boundaries.scan import check_syntax, decode_source, extract_imports
from mir.boundaries.settings import LintOptions, LintSettings
from mir.boundaries.watch import watch_boundaries

__all__ = [
    "FORMATS",
    "BaselineEntry",
    "Finding",
    "ImportRef",
    "LintOptions",
    "LintReport",
    "LintSettings",
    "LintStats",
    "RuleInfo",
    "all_rules",
    "check_syntax",
    "decode_source",
    "extract_imports",
    "extract_imports_ast",
    "lint_boundaries",
    "load_lint_project",
    "render",
    "resolve_relative",
    "rule_for",
    "watch_boundaries",
]
