"""MIR203 unused-dependency: every capability in `depends_on` exists and is imported.

## What it does
Reports a `depends_on` entry that names no capability of the project, or a capability
that the declaring capability never imports.

## Why it matters
`depends_on` is only useful while it is true. A stale entry hides real coupling
decisions behind imaginary ones and keeps a dependency "allowed" long after it was
removed, so the next accidental import of it passes review.

## Example
```yaml
---
capability: billing
depends_on: [customers, refunds]   # MIR203 when billing never imports refunds
---
```

## How to fix
Remove the entry (or fix its spelling).
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR203"
NAME = "unused-dependency"


def check(model: LintModel) -> Iterator[Finding]:
    # every import counts here, TYPE_CHECKING ones included: a dependency used only for
    # annotations is still a dependency worth declaring
    used: set[tuple[str | None, str]]
    if model.settings.type_checking_imports:  # the edges already hold every import
        used = {(edge.source_capability, edge.target_capability or "") for edge in model.edges()}
    else:
        used = set()
        for module in model.modules.values():
            source = model.capability_of(module.name)
            for ref in module.imports:
                for target in model.resolve(ref):
                    used.add((source, model.capability_of(target) or ""))
    for capability in model.capabilities.values():
        doc = capability.doc
        if doc is None or capability.intent is None:
            continue
        line = capability.intent.field_lines.get("depends_on", 1)
        for dependency in doc.depends_on:
            if dependency not in model.capabilities:
                message = f"depends_on names '{dependency}', which is not a capability"
            elif (capability.name, dependency) not in used:
                message = f"depends_on declares '{dependency}' but no module imports it"
            else:
                continue
            yield Finding(
                code=CODE,
                path=capability.intent.path,
                line=line,
                column=0,
                message=message,
                rule=NAME,
                capability=capability.name,
                imported=dependency,
            )
