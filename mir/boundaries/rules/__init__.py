"""The rule catalogue: one module per rule, each with a stable code and a fixed-section doc.

A rule module defines ``CODE``, ``NAME``, ``check(model) -> Iterator[Finding]`` and a
docstring whose first line is the summary and whose sections are *What it does*, *Why
it matters*, *Example* and *How to fix* (``mir lint explain CODE`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel
from mir.boundaries.rules import (
    mir101_layer_direction,
    mir102_public_interface,
    mir103_declared_dependency,
    mir104_forbidden_import,
    mir105_capability_cycle,
    mir201_intent_doc_missing,
    mir202_intent_doc_invalid,
    mir203_unused_dependency,
    mir204_public_mismatch,
    mir205_module_not_placed,
    mir206_intent_doc_placeholder,
    mir301_syntax_error,
    mir302_relative_beyond_top,
    mir303_capability_without_init,
    mir304_unused_ignore,
    mir305_capability_too_large,
)

_MODULES: tuple[ModuleType, ...] = (
    mir101_layer_direction,
    mir102_public_interface,
    mir103_declared_dependency,
    mir104_forbidden_import,
    mir105_capability_cycle,
    mir201_intent_doc_missing,
    mir202_intent_doc_invalid,
    mir203_unused_dependency,
    mir204_public_mismatch,
    mir205_module_not_placed,
    mir206_intent_doc_placeholder,
    mir301_syntax_error,
    mir302_relative_beyond_top,
    mir303_capability_without_init,
    mir304_unused_ignore,
    mir305_capability_too_large,
)
SECTIONS = ("What it does", "Why it matters", "Example", "How to fix")


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    doc: str
    check: Callable[[LintModel], Iterator[Finding]]


def _info(module: ModuleType) -> RuleInfo:
    doc = (module.__doc__ or "").strip()
    first = doc.splitlines()[0]
    summary = first.split(":", 1)[1].strip() if ":" in first else first
    return RuleInfo(module.CODE, module.NAME, summary, doc, module.check)


def all_rules() -> list[RuleInfo]:
    return [_info(module) for module in _MODULES]


def rule_for(code: str) -> RuleInfo | None:
    wanted = code.strip().upper()
    return next((rule for rule in all_rules() if wanted in (rule.code, rule.name.upper())), None)


def run_rules(model: LintModel) -> list[Finding]:
    rules = all_rules()
    findings = [finding for rule in rules for finding in rule.check(model)]
    # inline ignore comments (MIR304) go last: they need every other finding
    findings = mir304_unused_ignore.apply(model, findings, {rule.code for rule in rules})
    return sorted(findings, key=lambda finding: finding.sort_key)
