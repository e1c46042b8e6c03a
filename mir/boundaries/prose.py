"""The prose of an intent doc: its body, its sections, and which of them say nothing.

A section is a Markdown heading with what follows it up to the next heading of the same
or a higher level, or a bold label that opens a paragraph (``**Belongs here:** ...``,
``**Invariants**``) with what follows it up to the next label or heading. Headings and
labels inside fenced code blocks are text. Pure: the adapters hand in the text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

FENCE = "---"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LABEL = re.compile(r"^\*\*([^*]+?)\*\*(.*)$")
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
_TODO = re.compile(r"^(?:[-*+]\s+)?(?:TODO|TBD|FIXME|XXX)\b", re.IGNORECASE)
_ELLIPSIS = {"...", "…", "-", "*"}
COMMENT_MARK = "\u2063"  # stands in for an HTML comment, newlines kept


class Section(NamedTuple):
    line: int  # 1-based, in the file
    title: str
    level: int  # 1-6 for headings, 7 for a bold label
    text: tuple[str, ...]  # its own lines (up to its first sub-heading), comments marked


class Empty(NamedTuple):
    line: int
    title: str
    why: str  # "empty", "placeholder" (an HTML comment only) or "todo"


def split_body(text: str) -> tuple[str, int]:
    """(body after the front matter, 1-based line of its first line); the whole text
    from line 1 when there is no closed front matter."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == FENCE:
        for index in range(1, len(lines)):
            if lines[index].strip() == FENCE:
                return "".join(lines[index + 1 :]), index + 2
    return text, 1


def _without_comments(body: str) -> str:
    return _COMMENT.sub(lambda m: COMMENT_MARK + "\n" * m.group().count("\n"), body)


def _label(line: str) -> tuple[str, str] | None:
    """(label, rest of the line) of a bold label; None for bold emphasis in a sentence."""
    match = _LABEL.match(line)
    if match is None:
        return None
    label, rest = match.group(1).strip(), match.group(2).strip()
    if label.endswith(":"):
        return label[:-1].strip(), rest
    if rest.startswith(":"):
        return label, rest[1:].strip()
    return (label, "") if not rest else None


def sections(body: str, first_line: int = 1) -> list[Section]:
    """Every heading and bold-label section of ``body``, in order."""
    found: list[tuple[int, str, int, list[str]]] = []
    open_heading: list[int] = []  # indexes into found of the headings still collecting
    label: int | None = None
    fenced = False
    for offset, line in enumerate(_without_comments(body).splitlines()):
        number = first_line + offset
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(stripped)
        if heading is not None:
            level = len(heading.group(1))
            open_heading = [i for i in open_heading if found[i][2] < level]
            found.append((number, heading.group(2), level, []))
            open_heading.append(len(found) - 1)
            label = None
            continue
        bold = None if fenced or line[:1].isspace() else _label(stripped)
        if bold is not None:  # a sub-section of the heading it is under
            found.append((number, bold[0], 7, [bold[1]]))
            label = len(found) - 1
            continue
        target = label if label is not None else (open_heading[-1] if open_heading else None)
        if target is not None:
            found[target][3].append(stripped)
    return [Section(n, title, level, tuple(text)) for n, title, level, text in found]


def _why_empty(text: tuple[str, ...]) -> str | None:
    words = [line for line in text if line and line != COMMENT_MARK]
    words = [line.replace(COMMENT_MARK, "").strip() for line in words]
    words = [line for line in words if line]
    if not words:
        return "placeholder" if any(COMMENT_MARK in line for line in text) else "empty"
    if all(_TODO.match(line) or line in _ELLIPSIS for line in words):
        return "todo"
    return None


def empty_sections(body: str, first_line: int = 1) -> list[Empty]:
    """The sections that say nothing: no text, only an HTML comment (a scaffold's
    placeholder), or only TODO / TBD / FIXME / "..." lines. A heading with no text of its
    own but sub-sections (headings or bold labels) is judged by them; a title (level 1)
    never is."""
    found = sections(body, first_line)
    empty = []
    for index, section in enumerate(found):
        if section.level == 1:
            continue
        why = _why_empty(section.text)
        if why is None:
            continue
        following = found[index + 1] if index + 1 < len(found) else None
        has_children = following is not None and following.level > section.level
        if why == "empty" and has_children:
            continue
        empty.append(Empty(section.line, section.title, why))
    return empty
