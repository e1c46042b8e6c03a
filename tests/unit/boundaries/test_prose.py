"""An intent doc's prose: its sections, and which say nothing (MIR206)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mir.boundaries.prose import empty_sections, sections, split_body

ROOT = Path(__file__).resolve().parents[3]


def _empty(text: str) -> list[tuple[int, str, str]]:
    body, line = split_body(text)
    return [tuple(found) for found in empty_sections(body, line)]


def test_headings_and_bold_labels_are_sections_with_file_lines() -> None:
    text = "---\ncapability: a\n---\n# a\n\n**Belongs here:** x\n\n## Invariants\n- y\n"
    body, line = split_body(text)
    assert [(s.line, s.title, s.level) for s in sections(body, line)] == [
        (4, "a", 1),
        (6, "Belongs here", 7),
        (8, "Invariants", 2),
    ]


def test_placeholder_todo_and_empty_sections_are_told_apart() -> None:
    text = (
        "---\ncapability: a\n---\n# a\n\n## Purpose\n<!-- say\nwhat -->\n\n"
        "## Invariants\n- TODO: later\n...\n\n**Verify:**\n\n## Fine\nwords\n"
    )
    assert _empty(text) == [
        (6, "Purpose", "placeholder"),
        (10, "Invariants", "todo"),
        (14, "Verify", "empty"),
    ]


def test_a_parent_is_judged_by_its_sub_sections_and_the_title_never() -> None:
    assert _empty("# a\n## Layout\n### Files\n- x.py\n") == []
    assert _empty("# a\n## Layout\n### Files\n") == [(3, "Files", "empty")]
    assert _empty("---\ncapability: a\n---\n# a\n") == []


def test_code_blocks_and_emphasis_are_text() -> None:
    text = "# a\n## Verify\n```bash\n# not a heading\n**no label**\n```\n**Bold** in a sentence.\n"
    assert [s.title for s in sections(*split_body(text))] == ["a", "Verify"]
    assert _empty(text) == []


def test_the_scaffold_writes_prose_and_its_old_placeholder_is_reported() -> None:
    template = (ROOT / "templates" / "capability" / "CLAUDE.md.j2").read_text()
    assert _empty(template) == []
    old = template.replace(
        template[template.index("## Purpose\n") + 11 : template.index("## Public interface")],
        "<!-- What this capability decides or does, in the business's words. -->\n\n",
    )
    assert [title for _, title, _ in _empty(old)] == ["Purpose"]


def test_mirs_own_intent_docs_say_something_in_every_section() -> None:
    for doc in [ROOT / "CLAUDE.md", *sorted((ROOT / "mir").glob("*/CLAUDE.md"))]:
        assert _empty(doc.read_text(encoding="utf-8")) == [], doc


@given(st.text(alphabet="#*-`<!>\n :TODOab.~", max_size=200))
def test_any_text_splits_into_sections_without_error(text: str) -> None:
    body, line = split_body(text)
    found = sections(body, line)
    assert all(line <= s.line <= line + body.count("\n") for s in found)
    reported = empty_sections(body, line)
    assert {e.line for e in reported} <= {s.line for s in found}
