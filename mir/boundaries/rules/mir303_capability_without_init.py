"""MIR303 capability-without-init: every capability has an `__init__.py`.

## What it does
Reports a capability folder without `__init__.py`. Its modules are still linted (as a
namespace package, never skipped), but it has no public interface, so every import of
it from another capability is an import of a private module (MIR102).

## Why it matters
The `__init__.py` is the capability's public interface: the one place that says which
names others may use.

## Example
```
capabilities/refunds/domain.py      # no capabilities/refunds/__init__.py -> MIR303
```

## How to fix
Add `__init__.py` re-exporting the public names, and list them under `public:` in the
intent doc.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR303"
NAME = "capability-without-init"


def check(model: LintModel) -> Iterator[Finding]:
    for capability in model.capabilities.values():
        if not capability.has_init:
            yield Finding(
                code=CODE,
                path=f"{capability.path}/__init__.py",
                line=1,
                column=0,
                message=f"capability '{capability.name}' has no __init__.py (public interface)",
                rule=NAME,
                capability=capability.name,
            )
