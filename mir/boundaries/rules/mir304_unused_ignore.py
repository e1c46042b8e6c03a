"""MIR304 unused-ignore: every `# mir: ignore[CODE]` comment still suppresses something.

## What it does
A finding is suppressed when the line it points at carries `# mir: ignore[CODE]` for its
code (several codes: `# mir: ignore[MIR101, MIR104]`; text after the bracket is the
reason). This rule reports a comment that suppresses nothing on its line, names an
unknown code, or names no code at all (`# mir: ignore` alone is never a blanket
suppression). With `[tool.mir.lint] inline_ignores = false` no comment is honoured and
every finding is reported.

## Why it matters
An ignore that no longer matches a finding (the import was fixed, moved or renamed) would
silently swallow the next violation on that line. Naming the code keeps each exception
narrow and reviewable; the baseline file is the tool for many known findings at once.

## Example
```python
from capabilities.billing.domain import Invoice  # mir: ignore[MIR102] until billing exports it
import json  # mir: ignore[MIR104]   <- MIR304: nothing to suppress here
```

## How to fix
Delete the comment (or the code that no longer applies), or fix the code it names.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR304"
NAME = "unused-ignore"


def check(model: LintModel) -> Iterator[Finding]:
    """Nothing on its own: ``apply`` runs after every other rule (it needs their findings)."""
    return iter(())


def apply(model: LintModel, findings: list[Finding], known: set[str]) -> list[Finding]:
    """``findings`` without the suppressed ones, plus a MIR304 finding per directive code
    that suppressed nothing, is unknown, or per directive naming no code."""
    if not model.settings.inline_ignores:
        return findings
    directives: dict[tuple[str, int], tuple[str, ...]] = {}
    modules = {}
    for module in model.modules.values():
        for line, codes in module.ignores:
            directives[module.path, line] = codes
            modules[module.path] = module
    if not directives:
        return findings
    used: set[tuple[str, int, str]] = set()
    kept = []
    for finding in findings:
        codes = directives.get((finding.path, finding.line))
        if codes is not None and finding.code in codes and finding.code != CODE:
            used.add((finding.path, finding.line, finding.code))
            continue
        kept.append(finding)
    for (path, line), codes in directives.items():
        module = modules[path]
        capability = model.capability_of(module.name)
        if not codes:
            message = "'# mir: ignore' needs the codes it suppresses: # mir: ignore[MIR101]"
            kept.append(_finding(path, line, message, capability, module.name))
        for code in codes:
            if code not in known:
                message = f"'# mir: ignore[{code}]' names no mir rule"
            elif (path, line, code) not in used:
                message = f"'# mir: ignore[{code}]' suppresses nothing on this line"
            else:
                continue
            kept.append(_finding(path, line, message, capability, module.name))
    return kept


def _finding(path: str, line: int, message: str, capability: str | None, module: str) -> Finding:
    return Finding(
        code=CODE,
        path=path,
        line=line,
        column=0,
        message=message,
        rule=NAME,
        capability=capability,
        importer=module,
    )
