"""mir's own intent docs stay true to the tree: every capability's Layout section names
each of its modules (and none that is gone), and no issue or helper label stands in
code or docs (they mean nothing to a reader who was not there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mir.boundaries.prose import sections, split_body
from mir.contracts import LAYERS, load_intent_doc

ROOT = Path(__file__).resolve().parents[2]
CAPABILITIES = sorted(path.parent for path in (ROOT / "mir").glob("*/CLAUDE.md"))
_ITEM = re.compile(r"^- `([A-Za-z_][A-Za-z0-9_]*)/?`", re.MULTILINE)
_TAGGED = re.compile(
    r"^- `([A-Za-z_][A-Za-z0-9_]*)/?`(?: \((domain|application|adapters)\))?:", re.MULTILINE
)


def _modules(folder: Path) -> set[str]:
    """Top-level modules and subpackages of a capability (its __init__ aside)."""
    names = {path.stem for path in folder.glob("*.py") if path.name != "__init__.py"}
    names |= {path.parent.name for path in folder.glob("*/__init__.py")}
    names |= {
        path.parent.name for path in folder.glob("*/*.py") if path.parent.name != "__pycache__"
    }
    return names


def _layout(doc: Path) -> str:
    text = doc.read_text(encoding="utf-8")
    body, first = split_body(text)
    found = sections(body, first)
    layout = [s for s in found if s.title == "Layout"]
    assert layout, f"{doc.relative_to(ROOT)} has no **Layout:** section"
    return "\n".join(layout[0].text)


@pytest.mark.parametrize("folder", CAPABILITIES, ids=lambda folder: folder.name)
def test_the_layout_section_lists_every_module(folder: Path) -> None:
    listed = set(_ITEM.findall(_layout(folder / "CLAUDE.md")))
    modules = _modules(folder)
    assert modules - listed == set(), f"mir/{folder.name}/CLAUDE.md Layout misses these"
    assert listed - modules == set(), f"mir/{folder.name}/CLAUDE.md Layout lists gone modules"


@pytest.mark.parametrize("folder", CAPABILITIES, ids=lambda folder: folder.name)
def test_the_layout_says_the_layer_the_front_matter_gives(folder: Path) -> None:
    doc = load_intent_doc(folder / "CLAUDE.md")
    for name, tag in _TAGGED.findall(_layout(folder / "CLAUDE.md")):
        if doc.layout == "flat":
            assert tag == "", f"mir/{folder.name}: {name} is tagged {tag} in a flat capability"
            continue
        layer = name if name in LAYERS else doc.layers.get(name)
        assert (tag or name) == layer, f"mir/{folder.name}/CLAUDE.md: {name} ({tag}) is {layer}"


# spelled in two halves so that this file does not match itself
LABEL = re.compile(r"\b(?:iss" + r"ue\s*#?\d+|hel" + r"per\s+[a-z]*\d+)\b", re.IGNORECASE)
SCANNED = ("mir", "templates", "tests", "bench", "docs", "examples", "capabilities")
TOP_DOCS = ("README.md", "CLAUDE.md", "AGENTS.md")
SUFFIXES = {".py", ".md", ".j2", ".toml", ".yaml", ".yml", ".txt", ".html", ".ambr"}


def _scanned_files() -> list[Path]:
    files = [ROOT / name for name in TOP_DOCS if (ROOT / name).is_file()]
    for folder in SCANNED:
        files += [
            path
            for path in sorted((ROOT / folder).rglob("*"))
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts
        ]
    return files


def test_no_issue_or_helper_labels_in_code_or_docs() -> None:
    hits = []
    for path in _scanned_files():
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if LABEL.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == [], "say what the code does instead:\n" + "\n".join(hits)


def test_the_label_pattern_finds_what_it_guards_against() -> None:
    assert LABEL.search("lands with the registry editing (hel" + "per m1)")
    assert LABEL.search("a model file (Iss" + "ue 12, point 2)")
    assert not LABEL.search("an issue with the helper function, 12 of them")
