"""MIR101 layer-direction: inside a capability, imports point inward only.

## What it does
Reports an import from an inner layer of a capability to an outer one: `domain` must
not import `application` or `adapters`, and `application` must not import `adapters`.
Modules are placed in layers by name (`domain`, `application`, `adapters`, or the
intent doc's `layers:` map); an unplaced module counts as `adapters` (and is a MIR205
finding). A capability declared `layout: flat` has no layers to check.

## Why it matters
The domain is the part that must stay testable without a database, a model or a
network. One import outward and the domain drags its adapters (and their heavy
dependencies) into every test and every process that only needed the rules.

## Example
```python
# capabilities/refunds/domain.py
from capabilities.refunds.adapters import RefundTable  # MIR101
```

## How to fix
Declare what the domain needs as a `typing.Protocol` port in `application` (or a plain
value type in `domain`) and let the adapter implement it; pass the adapter in from the
composition function.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LAYER_RANK, LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR101"
NAME = "layer-direction"


def check(model: LintModel) -> Iterator[Finding]:
    for edge in model.edges():
        capability = edge.source_capability
        if capability is None or edge.target_capability != capability:
            continue
        source, target = edge.source_layer, edge.target_layer
        if (
            source in LAYER_RANK
            and target in LAYER_RANK
            and LAYER_RANK[target] > LAYER_RANK[source]
        ):
            yield import_finding(
                CODE,
                NAME,
                edge,
                f"{source} layer imports {target} layer: {edge.importer.name} -> {edge.target}",
                capability,
            )
