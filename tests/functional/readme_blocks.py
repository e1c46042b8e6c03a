"""Read README.md's shell examples as data, for ``test_readme_examples.py``.

The README is the source: nothing here copies a command. Shell blocks are the fenced
``bash``/``sh``/``shell``/``console`` ones, and the ``run:`` steps of a GitHub workflow
in a ``yaml`` block. A *section* is the name in
the nearest ``<!-- section:NAME -->`` marker, else the slug of the last ``## `` heading
(``quick-start``), so handlers survive edits elsewhere in the file.

Placeholder rules (documented here, applied by :func:`expand_synopsis`):

* ``[--flag ...]`` (an optional option) runs the line twice: first with it, then
  without it (``--baseline F [--update-baseline]`` records the baseline, then checks it);
* ``[NAME]`` (an optional argument in capitals) runs the line twice: without it, then
  with ``METAVARS[NAME]`` in its place.

Expected exit codes (applied by :func:`documented_exit`): a trailing comment that
*starts* with ``exit N`` (then ends, or goes on after ``:``, ``;``, ``,`` or ``(``)
documents N. Comments that describe outcomes (``exit 0 clean, 1 findings``, ``exit 1
if tampered``) do not: the sandboxes are the clean, untampered case, so 0.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

SHELL_LANGS = frozenset({"bash", "sh", "shell", "console", "zsh"})
METAVARS = {"ROOT": "."}

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
_MARKER = re.compile(r"<!--\s*(/?)section:([\w-]+)\s*-->")
_HEADING = re.compile(r"^##\s+(.*)$")
_OPTIONAL_FLAG = re.compile(r"\s*\[(--[^\]]+)\]")
_OPTIONAL_ARG = re.compile(r"\s*\[([A-Z][A-Z_]*)\]")
_RUN = re.compile(r"^(\s*)(?:-\s+)?run:\s*(.*)$")
_EXIT = re.compile(r"^exit (\d)\s*(?:$|[:;,(])")


@dataclass(frozen=True)
class Line:
    section: str
    text: str  # the command as written, without its trailing comment
    comment: str
    number: int  # README line number: for messages only, never a key

    @property
    def words(self) -> list[str]:
        try:
            return shlex.split(self.text)
        except ValueError:
            return self.text.split()

    def where(self) -> str:
        return f"README.md:{self.number} [{self.section}] `{self.text}`"


@dataclass(frozen=True)
class Block:
    section: str
    lang: str
    number: int
    lines: tuple[Line, ...]


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def split_comment(text: str) -> tuple[str, str]:
    """``cmd  # note`` -> (``cmd``, ``note``); a ``#`` inside quotes or a word stays."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1].isspace()):
            return text[:index].rstrip(), text[index + 1 :].strip()
    return text.rstrip(), ""


def shell_blocks(readme: str) -> list[Block]:
    """Every fenced shell block of ``readme``, one :class:`Line` per command."""
    blocks: list[Block] = []
    marker: str | None = None
    heading = "top"
    fence: tuple[str, str, int, list[tuple[int, str]]] | None = None
    for number, raw in enumerate(readme.splitlines(), start=1):
        if fence is not None:
            if raw.strip().startswith(fence[0]) and not raw.strip().strip(fence[0][0]):
                section = marker or heading
                if fence[1] in SHELL_LANGS:
                    blocks.append(Block(section, fence[1], fence[2], _lines(section, fence[3])))
                elif fence[1] in ("yaml", "yml") and any(r == "jobs:" for _, r in fence[3]):
                    steps = _workflow_runs(fence[3])
                    blocks.append(Block(section, "workflow", fence[2], _lines(section, steps)))
                fence = None
            else:
                fence[3].append((number, raw))
            continue
        if found := _FENCE.match(raw.strip()):
            fence = (found.group(1), found.group(2).lower(), number, [])
        elif found := _MARKER.search(raw):
            marker = None if found.group(1) else found.group(2)
        elif found := _HEADING.match(raw):
            heading = _slug(found.group(1))
    return blocks


def _workflow_runs(raw_lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A GitHub workflow's ``run:`` steps are shell too: one-line and ``|`` scripts."""
    runs: list[tuple[int, str]] = []
    script_indent: int | None = None
    for number, raw in raw_lines:
        indent = len(raw) - len(raw.lstrip())
        if script_indent is not None and raw.strip() and indent >= script_indent:
            runs.append((number, raw))
            continue
        script_indent = None
        if found := _RUN.match(raw):
            if found.group(2).strip() in ("|", ">"):
                script_indent = len(found.group(1)) + 2
            else:
                runs.append((number, found.group(2)))
    return runs


def _lines(section: str, raw_lines: list[tuple[int, str]]) -> tuple[Line, ...]:
    lines: list[Line] = []
    pending = ""
    start = 0
    for number, raw in raw_lines:
        text = raw.strip()
        if text.startswith("$ "):  # console transcripts
            text = text[2:]
        if not pending:
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        command, comment = split_comment(pending + text)
        pending = ""
        if command:
            lines.append(Line(section, command, comment, start))
    return tuple(lines)


def expand_synopsis(text: str) -> list[str]:
    """The runnable forms of a synopsis line (see the module's placeholder rules)."""
    if found := _OPTIONAL_FLAG.search(text):
        with_it = text[: found.start()] + " " + found.group(1) + text[found.end() :]
        without = text[: found.start()] + text[found.end() :]
        return [*expand_synopsis(with_it), *expand_synopsis(without)]
    if found := _OPTIONAL_ARG.search(text):
        name = found.group(1)
        if name not in METAVARS:
            raise KeyError(f"no value for the placeholder [{name}]: add it to METAVARS")
        without = text[: found.start()] + text[found.end() :]
        given = text[: found.start()] + " " + METAVARS[name] + text[found.end() :]
        return [*expand_synopsis(without), *expand_synopsis(given)]
    return [text]


def documented_exit(comment: str) -> int | None:
    found = _EXIT.match(comment.strip())
    return int(found.group(1)) if found else None


def match_key(line: Line, keys: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The longest (section, command prefix) key whose words start ``line``'s words."""
    words = line.words
    matching = [
        (section, prefix)
        for section, prefix in keys
        if section == line.section and words[: len(prefix.split())] == prefix.split()
    ]
    return max(matching, key=lambda key: len(key[1].split()), default=None)


def read_readme(repo: Path) -> list[Block]:
    return shell_blocks((repo / "README.md").read_text(encoding="utf-8"))
