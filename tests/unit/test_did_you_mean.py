"""``did_you_mean``: the one helper behind every "did you mean ...?" hint, and a guard
that no module grows its own copy of it."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mir.errors import did_you_mean

MIR = Path(__file__).resolve().parents[2] / "mir"
# Modules allowed to call difflib themselves while they move to the helper: none now
# (the test fails on an entry no longer needed).
LEFT: set[str] = set()


def test_a_misspelt_name_gets_the_closest_known_one():
    assert did_you_mean("escalat", ["refund", "escalate", "reject"]) == "escalate"
    assert did_you_mean("evals", ("production", "eval", "shadow")) == "eval"
    assert did_you_mean(7, ["7x", "zzz"]) == "7x"  # a non-text value is compared as text


def test_nothing_close_is_no_suggestion():
    assert did_you_mean("qqqq", ["refund", "escalate"]) is None
    assert did_you_mean("anything", []) is None


def test_the_cutoff_decides_what_is_close():
    assert did_you_mean("pci", ["psi"], cutoff=0.9) is None
    assert did_you_mean("pci", ["psi"], cutoff=0.5) == "psi"


@given(st.text(max_size=20), st.lists(st.text(max_size=20), max_size=8))
def test_the_suggestion_is_always_one_of_the_known_names(value, known):
    found = did_you_mean(value, known)
    assert found is None or found in known
    if value in known:
        assert found == value  # an exact name is its own closest match


def _calls_difflib(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "difflib" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "difflib":
            return True
    return False


def test_no_module_but_the_helper_imports_difflib():
    users = {
        p.relative_to(MIR).as_posix()
        for p in MIR.rglob("*.py")
        if p.name != "errors.py" or p.parent != MIR
        if _calls_difflib(p)
    }
    assert users - LEFT == set(), f"use mir.errors.did_you_mean in {sorted(users - LEFT)}"
    assert LEFT - users == set(), f"fixed: drop {sorted(LEFT - users)} from LEFT"
