"""Every IL code a finding can carry has a doc in the fixed sections (for `explain`)."""

from __future__ import annotations

from mir.importlinter import RULE_DOCS
from mir.importlinter.application import CODES

SECTIONS = ("## What it does", "## Why it matters", "## Example", "## How to fix")


def test_each_code_has_a_doc_in_the_fixed_sections() -> None:
    assert set(RULE_DOCS) == set(CODES.values())
    for kind, code in CODES.items():
        doc = RULE_DOCS[code]
        # the first line names the code and the rule exactly as findings carry them
        assert doc.startswith(f"{code} importlinter-{kind.replace('_', '-')}: ")
        positions = [doc.index(section) for section in SECTIONS]
        assert positions == sorted(positions), code
