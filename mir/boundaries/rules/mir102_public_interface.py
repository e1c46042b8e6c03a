"""MIR102 public-interface: other capabilities are imported only through their public interface.

## What it does
Reports an import of another capability's internals (anything below its package, e.g.
`capabilities.refunds.domain`), and an import of a name from its package that its
intent doc does not list under `public`. Modules listed in `[tool.mir] shared` are exempt.

## Why it matters
A capability's `__init__.py` is a promise: these names are stable, everything else may
change. Reaching past it couples two slices at their most volatile points, and the next
refactor of one breaks the other in a place nobody thought to look.

## Example
```python
# capabilities/billing/application.py
from capabilities.refunds.domain import Refund   # MIR102: private module
from capabilities.refunds import _ledger          # MIR102: not declared public
```

## How to fix
Import from the package (`from capabilities.refunds import Refund`); if the name is
needed, re-export it in `refunds/__init__.py` and add it to `public:` in its intent doc.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR102"
NAME = "public-interface"


def check(model: LintModel) -> Iterator[Finding]:
    for edge, source, target in model.cross_capability_edges():
        package = model.capabilities[target].module
        if edge.target != package:
            yield import_finding(
                CODE,
                NAME,
                edge,
                f"imports {edge.target}, a private module of capability '{target}' "
                f"(import from {package})",
                source,
            )
            continue
        doc = model.capabilities[target].doc
        if doc is None or edge.ref.module != package:
            continue
        hidden = [name for name in edge.ref.names if name not in doc.public and name != "*"]
        if hidden:
            yield import_finding(
                CODE,
                NAME,
                edge,
                f"imports {', '.join(hidden)} from {package}, not declared public in "
                f"{model.capabilities[target].intent.path}",
                source,
            )
