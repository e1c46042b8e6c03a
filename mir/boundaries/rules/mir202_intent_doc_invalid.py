"""MIR202 intent-doc-invalid: the intent doc's front matter is valid and names its folder.

## What it does
Reports an intent doc whose front matter is missing, is not valid YAML, does not
validate (unknown keys, wrong types, invalid layer names), or whose `capability:` is
not the name of the folder it lives in.

## Why it matters
A typo in the front matter would otherwise switch rules off silently: an unknown key is
a rule nobody enforces.

## Example
```yaml
---
capability: refund          # MIR202: folder is 'refunds'
depends_on: customers       # MIR202: must be a list
---
```

## How to fix
Fix the field the message names; the JSON schema `schemas/intent-doc.schema.json` gives
editor completion.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR202"
NAME = "intent-doc-invalid"


def check(model: LintModel) -> Iterator[Finding]:
    for capability in model.capabilities.values():
        intent = capability.intent
        if intent is None:
            continue
        if intent.error is not None:
            for line, message in intent.problems or ((intent.error_line, intent.error),):
                yield _finding(intent.path, line, message, capability.name)
            continue
        if intent.doc is not None and intent.doc.capability != capability.name:
            message = (
                f"front matter says capability '{intent.doc.capability}' but the folder is "
                f"'{capability.name}'"
            )
            line = intent.field_lines.get("capability", 1)
        else:
            continue
        yield _finding(intent.path, line, message, capability.name)


def _finding(path: str, line: int, message: str, capability: str) -> Finding:
    return Finding(
        code=CODE,
        path=path,
        line=line,
        column=0,
        message=message,
        rule=NAME,
        capability=capability,
    )
