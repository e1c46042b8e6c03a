"""Boundary linting: the import extractors, findings and ``lint_boundaries`` (public).

Names resolve lazily (PEP 562) so a cached ``mir lint boundaries`` run, which reuses
its previous findings, never imports the rules, the model or the contract formats.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.boundaries.cache import code_fingerprint
    from mir.boundaries.composition import lint_boundaries, load_lint_project
    from mir.boundaries.findings import Finding
    from mir.boundaries.formats import render
    from mir.boundaries.imports import ImportRef, extract_imports_ast, resolve_relative
    from mir.boundaries.replay import cache_folder, replay_report
    from mir.boundaries.report import BaselineEntry, LintReport, LintStats
    from mir.boundaries.rules import RuleInfo, all_rules, rule_for
    from mir.boundaries.scan import check_syntax, decode_source, extract_imports
    from mir.boundaries.settings import FORMATS, LintOptions, LintSettings
    from mir.boundaries.text_format import text_lines
    from mir.boundaries.watch import watch_boundaries

_WHERE = {
    "code_fingerprint": "cache",
    "lint_boundaries": "composition",
    "load_lint_project": "composition",
    "Finding": "findings",
    "FORMATS": "settings",
    "render": "formats",
    "ImportRef": "imports",
    "extract_imports_ast": "imports",
    "resolve_relative": "imports",
    "replay_report": "replay",
    "cache_folder": "replay",
    "BaselineEntry": "report",
    "LintReport": "report",
    "LintStats": "report",
    "RuleInfo": "rules",
    "all_rules": "rules",
    "rule_for": "rules",
    "check_syntax": "scan",
    "decode_source": "scan",
    "extract_imports": "scan",
    "LintOptions": "settings",
    "LintSettings": "settings",
    "watch_boundaries": "watch",
    "text_lines": "text_format",
}

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
    "cache_folder",
    "check_syntax",
    "code_fingerprint",
    "decode_source",
    "extract_imports",
    "extract_imports_ast",
    "lint_boundaries",
    "load_lint_project",
    "render",
    "replay_report",
    "resolve_relative",
    "rule_for",
    "text_lines",
    "watch_boundaries",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"mir.boundaries.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'mir.boundaries' has no attribute {name!r}")
