"""MIR301 syntax-error: every file parses with the running Python.

## What it does
Reports a file that this interpreter cannot decode (bad or unknown PEP 263 encoding) or
parse, at the line of the error. The run goes on: the file's imports are still found by
the text-level extractor and checked by every other rule, so a file using syntax newer
than the running Python still has its boundaries enforced.

The parse is ruff's (native, beside the import scan), for the running Python's version:
the grammar and the compile-time errors ruff knows (a duplicate parameter, `return`
outside a function, a late `__future__` import, syntax newer than this Python). It is
held to CPython by a differential test: every file `ast.parse` rejects is reported and
none that `compile` accepts is. `[tool.mir.lint] syntax_checker = "python"` (also used
when ruff is not installed) parses with CPython itself, slower, and also catches the
scope errors only its symbol table sees (`nonlocal x` with no `x`).

## Why it matters
A linter that crashes or silently skips a broken file gives a green build over code
that was never checked. Newer syntax is reported too, because a file the CI Python
cannot parse is one its tests cannot import.

## Example
```python
def refund(:   # MIR301: invalid syntax
```

## How to fix
Fix the syntax, or run mir with the Python version the project targets. Set
`[tool.mir.lint] syntax_errors = false` to leave parsing to another tool.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR301"
NAME = "syntax-error"


def check(model: LintModel) -> Iterator[Finding]:
    if not model.settings.syntax_errors:
        return
    for module in model.modules.values():
        if module.problem is not None:
            yield Finding(
                code=CODE,
                path=module.path,
                line=module.problem.line,
                column=module.problem.column,
                message=f"does not parse: {module.problem.message}",
                rule=NAME,
                capability=model.capability_of(module.name),
                importer=module.name,
            )
