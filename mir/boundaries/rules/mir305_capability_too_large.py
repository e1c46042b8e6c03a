"""MIR305 capability-too-large: a capability fits the token budget set for it (opt-in).

## What it does
With `[tool.mir.lint] max_capability_tokens = N`, reports a capability whose files come
to more than N tokens. Its size is counted as `mir lint` sees the folder: the bytes of
every `.py` file it lints in the capability (`exclude` applies, `tests/` included) and of
every `.md` file there (the intent doc included), divided by 4 and rounded up, about the
count of a model's tokenizer on English prose and Python. Without the setting, nothing is
reported.

## Why it matters
The intent doc's promise to a coding assistant is that one capability can be read whole
and changed with its boundaries in view. A capability that no longer fits the assistant's
context window is read in pieces, and the piece that holds the invariant is the one that
gets left out. The budget makes "this slice grew too large" a finding while it is still
cheap to split.

## Example
```toml
[tool.mir.lint]
max_capability_tokens = 60000
```
```
capabilities/billing/CLAUDE.md:1:1: MIR305 capability 'billing' is about 72,310 tokens
(289,240 bytes of .py and .md files / 4), over max_capability_tokens = 60,000
```

## How to fix
Split the capability along a boundary its intent doc already names (a new capability
with its own intent doc and `public:` interface), move generated or vendored files out
of it, or raise the budget to what your assistants really hold.
"""

from __future__ import annotations

from collections.abc import Iterator

from mir.boundaries.findings import Finding
from mir.boundaries.model import LintModel

CODE = "MIR305"
NAME = "capability-too-large"


def capability_bytes(model: LintModel) -> dict[str, int]:
    """Bytes of each capability's .py files (as linted) and .md files."""
    sizes = {name: capability.markdown_bytes for name, capability in model.capabilities.items()}
    for module in model.modules.values():
        capability = model.capability_of(module.name)
        if capability is not None:
            sizes[capability] += module.size
    return sizes


def check(model: LintModel) -> Iterator[Finding]:
    budget = model.settings.max_capability_tokens
    if budget is None:
        return
    for name, size in sorted(capability_bytes(model).items()):
        tokens = -(-size // 4)
        if tokens <= budget:
            continue
        capability = model.capabilities[name]
        path = capability.intent.path if capability.intent else f"{capability.path}/__init__.py"
        yield Finding(
            code=CODE,
            path=path,
            line=1,
            column=0,
            message=f"capability '{name}' is about {tokens:,} tokens ({size:,} bytes of .py "
            f"and .md files / 4), over max_capability_tokens = {budget:,}",
            rule=NAME,
            capability=name,
        )
