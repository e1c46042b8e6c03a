"""Appending cases to an eval suite file without losing a byte of what is there.

mir reads YAML with PyYAML, which does not keep comments; rewriting a suite would drop
every comment its authors wrote. So new cases are appended as text at the end of the
suite's ``cases:`` list (which must be the file's last top-level key), indented like the
cases already there, each list item dumped by ``yaml.safe_dump`` (any text an input
holds is quoted by the dumper, never spliced in). The result is parsed and validated as
an ``EvalSuite`` before it replaces the file (written beside it, then renamed): a file
that would not come out valid with exactly the old cases plus the new is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from mir.contracts import EvalSuite, load_eval_suite
from mir.errors import ConfigError
from mir.storage import atomic_file


def suite_text(agent: str) -> str:
    return (
        f"# Eval suite of the `{agent}` agent. Format: `mir schema eval-suite.schema.json`.\n"
        "# Cases tagged from-review were exported from human reviews (`mir review export`).\n"
        f"agent: {agent}\n"
        "cases:\n"
    )


def append_cases(
    path: Path, cases: Sequence[dict[str, Any]], *, agent: str, comment: str = ""
) -> EvalSuite:
    """Append ``cases`` to the suite at ``path`` (created for ``agent`` if missing)."""
    text = path.read_text(encoding="utf-8") if path.exists() else suite_text(agent)
    before = load_eval_suite(path) if path.exists() else None
    indent, text = _cases_tail(text, path)
    block = "".join(_item(case, indent) for case in cases)
    note = f"{' ' * indent}# {' '.join(comment.split())}\n" if comment and cases else ""
    new_text = text + note + block
    path.parent.mkdir(parents=True, exist_ok=True)
    # an existing suite keeps its mode; a new one is owner-only, like the traces it is from
    with atomic_file(path, mode=None if path.exists() else 0o600) as out:
        out.write(new_text)
        out.flush()
        suite = load_eval_suite(Path(out.name))  # what replaces the suite always loads
        old = len(before.cases) if before is not None else 0
        if len(suite.cases) != old + len(cases) or [c.id for c in suite.cases[old:]] != [
            c["id"] for c in cases
        ]:
            raise ConfigError(
                "appending the cases would not leave exactly the old cases plus the new",
                where=str(path),
                hint="move `cases:` to the end of the file, as a block list",
            )
    return suite


def _cases_tail(text: str, path: Path) -> tuple[int, str]:
    """The indentation of the ``cases`` items, and the text ready to append to."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", where=str(path)) from exc
    if not isinstance(node, yaml.MappingNode) or not node.value:
        raise ConfigError("an eval suite is a mapping (agent:, cases:)", where=str(path))
    key, value = node.value[-1]
    if not text.endswith("\n"):
        text += "\n"
    if key.value != "cases":
        if any(k.value == "cases" for k, _ in node.value):
            raise ConfigError(
                "`cases:` is not the last key of the suite: mir appends there",
                where=f"{path}:{key.start_mark.line + 1}",
                hint="move the `cases:` list to the end of the file",
            )
        return 2, text + "cases:\n"
    if isinstance(value, yaml.SequenceNode) and value.flow_style:
        if value.value:
            raise ConfigError(
                "`cases:` is a flow list ([...]): mir appends to a block list",
                where=f"{path}:{value.start_mark.line + 1}",
                hint="write each case as a `- id: ...` item",
            )
        # `cases: []`: the empty list becomes a block list
        line = value.start_mark.line
        lines = text.splitlines(keepends=True)
        lines[line] = lines[line][: value.start_mark.column].rstrip() + "\n"
        return 2, "".join(lines)
    if isinstance(value, yaml.SequenceNode) and value.value:
        return value.start_mark.column, text  # where its first "-" is
    if isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null"):
        return 2, text  # `cases:` with nothing yet
    raise ConfigError("`cases:` is not a list", where=f"{path}:{value.start_mark.line + 1}")


def _item(case: dict[str, Any], indent: int) -> str:
    dumped = _dumped(case, readable=True)
    if yaml.safe_load(dumped) != [case]:
        # PyYAML writes some characters as they are and reads them back as others
        # (U+0085 NEL became a space): escaped, every character reads back as it was
        dumped = _dumped(case, readable=False)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in dumped.splitlines(True))


def _dumped(case: dict[str, Any], *, readable: bool) -> str:
    return yaml.safe_dump(
        [case], sort_keys=False, allow_unicode=readable, default_flow_style=None, width=88
    )
