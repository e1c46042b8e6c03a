"""MIR103 declared-dependency: a capability imports only capabilities in its `depends_on`.

## What it does
Reports an import of another capability that the importing capability's intent doc
does not list under `depends_on`.

## Why it matters
`depends_on` is the architecture written down where humans and coding assistants read
it. An undeclared dependency is a decision nobody made: it is how capabilities quietly
grow into one ball of mud, one convenient import at a time.

## Example
```yaml
# capabilities/billing/CLAUDE.md
---
capability: billing
depends_on: [customers]
---
```
```python
# capabilities/billing/application.py
from capabilities.refunds import RefundService  # MIR103: refunds not in depends_on
```

## How to fix
If the dependency is intended, add it to `depends_on` (and check MIR105 for a cycle);
otherwise move the shared concept to the capability that owns it, or to a module listed
in `[tool.mir] shared`.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR103"
NAME = "declared-dependency"


def check(model: LintModel) -> Iterator[Finding]:
    for edge, source, target in model.cross_capability_edges():
        if source is None:
            continue
        doc = model.capabilities[source].doc
        if doc is None or target in doc.depends_on:
            continue
        yield import_finding(
            CODE,
            NAME,
            edge,
            f"capability '{source}' imports '{target}', which is not in its depends_on "
            f"({model.capabilities[source].intent.path})",
            source,
        )
