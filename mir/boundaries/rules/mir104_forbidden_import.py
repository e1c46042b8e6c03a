"""MIR104 forbidden-import: each layer imports only what it is allowed to.

## What it does
Reports an import of a module the importing layer may not use:
- the domain may import only the standard library, first-party code and the modules in
  `[tool.mir.lint] domain_allow` (default: `pydantic`);
- modules in `[tool.mir.lint] adapter_only` (default: `litellm`, `llama_cpp`, `duckdb`,
  `requests`, `httpx`, `sqlalchemy`) are for the adapters layer only;
- `[tool.mir.lint] forbidden` (every capability) and the intent doc's `forbidden`
  (one capability) add modules per layer.
A module matches a listed name when it is that name or a submodule of it. In a
capability declared `layout: flat` only the `adapters` entries of `forbidden` apply.

## Why it matters
A model client or a database driver in the domain makes every business rule depend on
I/O: tests need the network, imports take seconds, and the rule can no longer be read
apart from the plumbing.

## Example
```python
# capabilities/refunds/domain.py
import litellm  # MIR104: adapter-only module in the domain layer
```

## How to fix
Move the call into an adapter behind a `typing.Protocol` port; the domain receives the
result as plain data.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import FLAT, LAYER_RANK, LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR104"
NAME = "forbidden-import"


def _matches(module: str, names: list[str]) -> str | None:
    return next((n for n in names if module == n or module.startswith(n + ".")), None)


def check(model: LintModel) -> Iterator[Finding]:
    verdicts: dict[tuple[str, str, str], str | None] = {}
    for edge in model.edges():
        key = (edge.source_capability, edge.source_layer, edge.target)
        if key not in verdicts:
            verdicts[key] = _verdict(model, *key)  # type: ignore[arg-type]
        message = verdicts[key]
        if message is not None:
            yield import_finding(CODE, NAME, edge, message, edge.source_capability)


def _verdict(
    model: LintModel, capability: str | None, layer: str | None, target: str
) -> str | None:
    """Why ``layer`` of ``capability`` may not import ``target``; None when it may."""
    settings = model.settings
    shown = layer
    if layer == FLAT:  # a flat capability is held to what its outermost layer may not use
        layer = "adapters"
    if capability is None or layer not in LAYER_RANK:
        return None
    doc = model.capabilities[capability].doc
    forbidden = [
        *settings.forbidden.get(layer, []),  # type: ignore[call-overload]
        *(doc.forbidden.get(layer, []) if doc else []),  # type: ignore[call-overload]
        *(settings.adapter_only if layer != "adapters" else []),
    ]
    hit = _matches(target, forbidden)
    if hit is not None:
        return f"{shown} layer may not import {target} (forbidden: {hit})"
    if (
        layer == "domain"
        and not model.is_stdlib(target)
        and not model.is_first_party(target)
        and _matches(target, settings.domain_allow) is None
    ):
        return (
            f"domain layer may import only the standard library, first-party code and "
            f"{', '.join(settings.domain_allow) or 'nothing else'}: {target}"
        )
    return None
