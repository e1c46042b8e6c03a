"""MIR302 relative-beyond-top: relative imports stay inside the top-level package.

## What it does
Reports a relative import whose dots climb above the top-level package
(`from ... import x` in `pkg/mod.py`). The import cannot be resolved, so no other rule
can check it.

## Why it matters
Python raises `ImportError` at run time for it; an unresolvable import is also a hole
in every boundary check.

## Example
```python
# capabilities/refunds/domain.py  (module capabilities.refunds.domain)
from .... import settings   # MIR302
```

## How to fix
Use an absolute import.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR302"
NAME = "relative-beyond-top"


def check(model: LintModel) -> Iterator[Finding]:
    for module in model.modules.values():
        for ref in module.imports:
            if ref.beyond_top:
                yield Finding(
                    code=CODE,
                    path=module.path,
                    line=ref.line,
                    column=ref.column,
                    message=f"relative import '{ref.module}' climbs above the top-level package",
                    rule=NAME,
                    capability=model.capability_of(module.name),
                    importer=module.name,
                    imported=ref.module,
                )
