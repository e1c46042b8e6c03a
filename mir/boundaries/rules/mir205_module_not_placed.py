"""MIR205 module-not-placed: every module of a capability is in a layer.

## What it does
Reports a module (or a subpackage) of a capability that no layer claims: it is not
named `domain`, `application` or `adapters`, is not under a package so named, and the
intent doc's `layers:` map does not name it. The capability's `__init__.py` and its
`tests/` need no place, nor a script whose name is no Python identifier
(`my-script.py`: nothing can import it; its imports count as `adapters`). A capability
whose intent doc says `layout: flat` has no layers inside it, so nothing in it needs
one. The finding is on the module's file (a subpackage's `__init__.py`, or its first
file), once per unplaced name. The module still counts as `adapters` for the other
rules.

## Why it matters
A module nobody placed silently counted as `adapters`: the outermost layer, allowed to
import everything. A capability could claim a domain / application / adapters split
while most of its code sat in none of them, and no layer rule ever looked at it.

## Example
```yaml
---
capability: refunds
layers: {policy: domain}
---
```
```
capabilities/refunds/policy.py     # placed: domain
capabilities/refunds/storage.py    # MIR205: in no layer
```

## How to fix
Add the module to `layers:` with the layer it really is (`{storage: adapters}`: domain
is stdlib + pydantic without I/O, application the use cases and their `typing.Protocol`
ports, adapters files, databases and the network), rename or move it into a layer's
module or package, or declare the capability `layout: flat` when it is too small to
split (it then gives up the layer rules MIR101 and MIR104's per-layer lists).
Existing projects can baseline the findings (`--update-baseline`) and place modules one
at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel, SourceModule

CODE = "MIR205"
NAME = "module-not-placed"


def check(model: LintModel) -> Iterator[Finding]:
    reported: set[tuple[str, str]] = set()
    unplaced = [module for module in model.modules.values() if not model.is_placed(module.name)]
    # sorted by path: a subpackage's __init__.py comes before its other files
    for module in sorted(unplaced, key=_package_first):
        capability = model.capability_of(module.name)
        if capability is None:
            continue
        info = model.capabilities[capability]
        if info.doc is None or info.intent is None:
            continue  # MIR201 / MIR202: nothing to place it with yet
        first = module.name[len(info.module) + 1 :].split(".", 1)[0]
        if (capability, first) in reported:
            continue
        reported.add((capability, first))
        yield Finding(
            code=CODE,
            path=module.path,
            line=1,
            column=0,
            message=f"{info.module}.{first} is in no layer (counted as adapters): place it "
            f"in layers: of {info.intent.path}, or declare layout: flat",
            rule=NAME,
            capability=capability,
            importer=f"{info.module}.{first}",
        )


def _package_first(module: SourceModule) -> tuple[str, bool, str]:
    folder, _, name = module.path.rpartition("/")
    return (folder, name != "__init__.py", name)
