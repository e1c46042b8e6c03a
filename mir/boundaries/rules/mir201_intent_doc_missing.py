"""MIR201 intent-doc-missing: every capability has an intent doc (`CLAUDE.md`).

## What it does
Reports a capability folder without a `CLAUDE.md` intent doc.

## Why it matters
The intent doc is the capability's architecture in one place: what belongs here, what
it depends on, what it exposes. It is read by people and by coding assistants *and*
checked by this linter, so it is the one description that cannot silently go stale.
Without it, none of the capability's dependencies or public names can be checked.

## Example
```
capabilities/refunds/__init__.py
capabilities/refunds/domain.py      # no capabilities/refunds/CLAUDE.md -> MIR201
```

## How to fix
`mir new capability NAME` writes one; or add `CLAUDE.md` starting with front matter:
`capability`, `depends_on`, `public` (and optionally `forbidden`, `layers`).
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR201"
NAME = "intent-doc-missing"


def check(model: LintModel) -> Iterator[Finding]:
    for capability in model.capabilities.values():
        if capability.intent is None:
            yield Finding(
                code=CODE,
                path=f"{capability.path}/CLAUDE.md",
                line=1,
                column=0,
                message=f"capability '{capability.name}' has no intent doc (CLAUDE.md)",
                rule=NAME,
                capability=capability.name,
            )
