"""MIR104 forbidden-import: each layer imports only what it is allowed to.

## What it does
Reports an import of a module the importing layer may not use:
- the domain may import only the standard library, first-party code and the modules in
  `[tool.mir.lint] domain_allow` (default: `pydantic`);
- modules in `[tool.mir.lint] adapter_only` (default: `litellm`, `llama_cpp`, `duckdb`,
  `requests`, `httpx`, `sqlalchemy`) are for the adapters layer only;
- `[tool.mir.lint] forbidden` (every capability) and the intent doc's `forbidden`
  (one capability) add modules per layer.
A module matches a listed name when it is that name or a submodule of it.

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
from mir.boundaries.model import LAYER_RANK, LintModel
from mir.boundaries.rules.base import import_finding

CODE = "MIR104"
NAME = "forbidden-import"


def _matches(module: str, names: list[str]) -> str | None:
    return next((n for n in names if module == n or module.startswith(n + ".")), None)


def check(model: LintModel) -> Iterator[Finding]:
    settings = model.settings
    for edge in model.edges():
        capability = model.capability_of(edge.importer.name)
        layer = model.layer_of(edge.importer.name)
        if capability is None or layer not in LAYER_RANK:
            continue
        doc = model.capabilities[capability].doc
        forbidden = [
            *settings.forbidden.get(layer, []),  # type: ignore[call-overload]
            *(doc.forbidden.get(layer, []) if doc else []),  # type: ignore[call-overload]
            *(settings.adapter_only if layer != "adapters" else []),
        ]
        hit = _matches(edge.target, forbidden)
        if hit is not None:
            message = f"{layer} layer may not import {edge.target} (forbidden: {hit})"
        elif (
            layer == "domain"
            and not model.is_stdlib(edge.target)
            and not model.is_first_party(edge.target)
            and _matches(edge.target, settings.domain_allow) is None
        ):
            message = (
                f"domain layer may import only the standard library, first-party code and "
                f"{', '.join(settings.domain_allow) or 'nothing else'}: {edge.target}"
            )
        else:
            continue
        yield import_finding(CODE, NAME, edge, message, capability)
