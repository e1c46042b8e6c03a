"""The rule catalogue: stable codes, fixed doc sections, and a README that lists them."""

from __future__ import annotations

import re
from pathlib import Path

from mir.boundaries import all_rules, rule_for
from mir.boundaries.rules import SECTIONS

README = Path(__file__).resolve().parents[3] / "README.md"


def test_codes_are_unique_and_well_formed() -> None:
    codes = [rule.code for rule in all_rules()]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"MIR\d{3}", code) for code in codes)


def test_every_doc_has_the_sections_in_order() -> None:
    for rule in all_rules():
        positions = [rule.doc.find(f"## {section}") for section in SECTIONS]
        assert -1 not in positions and positions == sorted(positions), rule.code
        assert rule.doc.startswith(f"{rule.code} {rule.name}: ")


def test_rules_are_found_by_code_or_name() -> None:
    assert rule_for("mir105").name == "capability-cycle"
    assert rule_for("public-interface").code == "MIR102"
    assert rule_for("MIR999") is None


def test_readme_lists_every_rule() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("<!-- section:lint -->") : text.index("<!-- /section:lint -->")]
    for rule in all_rules():
        assert f"| {rule.code} | {rule.name} |" in section, rule.code
