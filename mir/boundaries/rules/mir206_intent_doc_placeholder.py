"""MIR206 intent-doc-placeholder: every section of an intent doc says something.

## What it does
Reports a section of a capability's intent doc (`CLAUDE.md`) that is empty, holds only
an HTML comment (the placeholder an older `mir new capability` wrote under
`## Purpose`), or only `TODO` / `TBD` / `FIXME` / `...` lines. A section is a Markdown
heading (up to the next heading of its level) or a bold label opening a paragraph
(`**Invariants**`, `**Belongs here:** ...`); headings in code blocks are text. A heading
whose text is all in its sub-sections is judged by them; the title (`# name`) is never
judged, and a doc with no sections under its title has none to report.

## Why it matters
The intent doc is what a coding assistant reads before it edits the capability: its
purpose, its boundaries, its invariants, how to verify a change. A heading with nothing
under it promises an answer and gives none, and a placeholder reads as a decision
nobody made. The front matter is checked by the other rules; this one keeps the prose
from being a template.

## Example
```markdown
## Purpose
<!-- What this capability decides or does, in the business's words. -->   # MIR206

## Invariants
TODO                                                                         # MIR206
```

## How to fix
Write the section (what the capability decides, what does NOT belong in it, what must
stay true, how to check a change), or delete the heading. A fresh `mir new capability`
writes prose that is true of the starter code it generates; rewrite it when the code
becomes your own.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel
from mir.boundaries.prose import empty_sections

CODE = "MIR206"
NAME = "intent-doc-placeholder"

_WHY = {
    "empty": "is empty",
    "placeholder": "is still a placeholder (only an HTML comment)",
    "todo": "is only a marker (TODO, TBD, FIXME, ...)",
}


def check(model: LintModel) -> Iterator[Finding]:
    for capability in model.capabilities.values():
        intent = capability.intent
        if intent is None or intent.doc is None:
            continue  # MIR201 / MIR202
        for empty in empty_sections(intent.body, intent.body_line):
            yield Finding(
                code=CODE,
                path=intent.path,
                line=empty.line,
                column=0,
                message=f"section '{empty.title}' {_WHY[empty.why]}: write it or delete it",
                rule=NAME,
                capability=capability.name,
            )
