"""Write ``docs/cli.md``, the command reference, from the typer app itself.

Every command and sub-command (hidden ones left out, as ``--help`` leaves them out) with
its ``--help`` text: summary, usage, arguments and options. The help is formatted at a
fixed width, whatever the terminal, so the file is the same on every machine.

``make docs`` runs it; ``tests/unit/test_cli_reference.py`` fails when the committed file
is stale. ``python docs/cli_reference.py --check`` exits 1 when it is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

WIDTH = 78  # what click uses on any terminal of 80 columns or more (its cap, less 2)
TARGET = Path(__file__).with_name("cli.md")
HEADER = """\
# `mir` command reference

Generated from the CLI itself by `make docs` (`docs/cli_reference.py`): do not edit by
hand; a test fails when this file is out of date. Each section is the command's
`--help`. The README explains the commands in context.
"""


def reference() -> str:
    from typer.main import get_command

    from mir.cli.app import build_app

    command = get_command(build_app())
    sections = [HEADER]
    for path, ctx in _walk(command, ["mir"], None):
        help_text = ctx.command.get_help(ctx).rstrip()
        sections.append(f"## `{' '.join(path)}`\n\n```text\n{help_text}\n```\n")
    return "\n".join(sections)


def _walk(command: Any, path: list[str], parent: Any) -> Any:
    # the command's own settings (``-h`` beside ``--help``), at the fixed width
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = command.context_class(command, info_name=path[-1], parent=parent, **settings)
    yield path, ctx
    for name in getattr(command, "list_commands", lambda _ctx: [])(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            yield from _walk(sub, [*path, name], ctx)


def main(argv: list[str]) -> int:
    text = reference()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else None
        if current != text:
            print(f"stale: {TARGET} (run `make docs`)", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
