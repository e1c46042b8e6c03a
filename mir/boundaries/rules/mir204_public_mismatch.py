"""MIR204 public-mismatch: `public` in the intent doc lists exactly what `__init__` exports.

## What it does
Compares the intent doc's `public:` with the names the capability's `__init__.py`
exports (its `__all__`, or else its public module-level names) and reports each name
on one side only.

## Why it matters
The public interface is what other capabilities may depend on. A name exported but not
declared is an interface nobody decided to offer; a name declared but not exported is
documentation that lies.

## Example
```python
# capabilities/refunds/__init__.py
__all__ = ["RefundService", "RefundTable"]   # MIR204: RefundTable not in public
```

## How to fix
Add the name to `public:` if it is meant to be used by others; otherwise stop exporting
it (or remove it from `public:`).
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR204"
NAME = "public-mismatch"


def check(model: LintModel) -> Iterator[Finding]:
    for capability in model.capabilities.values():
        doc, init = capability.doc, model.modules.get(capability.module)
        if doc is None or capability.intent is None or init is None or init.exports is None:
            continue
        declared, exported = set(doc.public), set(init.exports)
        line = capability.intent.field_lines.get("public", 1)
        for name in sorted(exported - declared):
            yield Finding(
                code=CODE,
                path=capability.intent.path,
                line=line,
                column=0,
                message=f"{init.path} exports '{name}', which public does not declare",
                rule=NAME,
                capability=capability.name,
                imported=name,
            )
        for name in sorted(declared - exported):
            yield Finding(
                code=CODE,
                path=capability.intent.path,
                line=line,
                column=0,
                message=f"public declares '{name}', which {init.path} does not export",
                rule=NAME,
                capability=capability.name,
                imported=name,
            )
