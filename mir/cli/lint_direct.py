"""``mir lint boundaries`` without typer, and what the typer command shares with it.

A warm run of an unchanged project needs ~30 ms of work, but importing typer and letting
it build pydantic type adapters for the options costs ~150 ms more (and a cold run pays
it too). So the console script first offers the arguments to ``direct_command``: when
they are a plain ``lint boundaries`` invocation that it fully understands, it replays
the cached findings if they are still valid (``mir.importlinter.lint_or_replay``: the
boundary findings replayed with the import-linter verdicts of ``--config`` or the
project's own config), else runs the linter (``lint_project``), and prints exactly what
the typer command prints (errors included); anything else (``--help``, an unknown or
invalid option, ``--watch``, ``--update-baseline``) returns None and the typer command
runs as usual.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mir.cli.output import error_console, note, print_error, say_parts

if TYPE_CHECKING:
    from mir.boundaries import LintReport

FORMATS = ("text", "json", "sarif", "github", "junit")  # mir.boundaries.FORMATS (test-held)
_VALUED = {
    "--format": "fmt",
    "-f": "fmt",
    "--cache-dir": "cache_dir",
    "--baseline": "baseline",
    "--config": "config",
}


def parse_arguments(argv: list[str]) -> dict[str, str] | None:
    """``lint boundaries [ROOT] [--format F | --json] [--cache-dir D] [--baseline B] [--config C]
    [--no-cache]``
    (each at most once, ``--opt=value`` too) as a dict; None for anything else."""
    if argv[:2] != ["lint", "boundaries"]:
        return None
    found: dict[str, str] = {}
    rest = argv[2:]
    i = 0
    while i < len(rest):
        token = rest[i]
        name, eq, value = token.partition("=")
        if token == "--no-cache":
            key, value = "no_cache", "1"
        elif token == "--json":  # the same as --format json (both at once: typer says)
            key, value = "fmt", "json"
        elif name in _VALUED and name.startswith("--") and eq:
            key = _VALUED[name]
        elif token in _VALUED and i + 1 < len(rest):
            key, value = _VALUED[token], rest[i + 1]
            i += 1
        elif not token.startswith("-") and "root" not in found:
            key, value = "root", token
        else:
            return None
        if key in found or not value:
            return None
        found[key] = value
        i += 1
    return found


def direct_command(argv: list[str]) -> int | None:
    """Run ``mir lint boundaries`` without typer; None: run the typer command instead."""
    found = parse_arguments(argv)
    if found is None or found.get("fmt", "text") not in FORMATS:
        return None
    root = Path(found["root"]) if "root" in found else None
    cache_dir = Path(found["cache_dir"]) if "cache_dir" in found else None
    baseline = Path(found["baseline"]) if "baseline" in found else None
    config = Path(found["config"]) if "config" in found else None
    if (
        (root is not None and root.is_file())
        or (cache_dir is not None and cache_dir.is_file())
        or (baseline is not None and baseline.is_dir())
        or (config is not None and config.is_dir())
    ):
        return None  # typer's own "is a file" / "is a directory" errors
    from mir.errors import MirUserError
    from mir.importlinter import lint_or_replay

    try:
        use_cache = "no_cache" not in found
        report = lint_or_replay(root, cache_dir, baseline, config, warn, use_cache=use_cache)
    except MirUserError as exc:
        print_error(exc)  # exactly what mir.cli.app.main prints
        return exc.exit_code
    except KeyboardInterrupt:
        note("interrupted")  # as mir.cli.app.main says it
        return 130
    print_report(report, found.get("fmt", "text"))
    return report.exit_code


def print_report(report: LintReport, fmt: str) -> None:
    """The report in ``fmt`` on stdout (what both the direct and the typer command print)."""
    if fmt == "text":
        render_text(report)
        return
    from mir.boundaries import render

    rendered = render(report, fmt)
    if rendered:  # github with no findings: no output, not an empty line
        sys.stdout.write(rendered + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    """A warning on stderr (stdout may be JSON, SARIF or JUnit), never a failure."""
    from rich.markup import escape

    error_console().print(f"[yellow]warning:[/] {escape(message)}", highlight=False)


def render_text(report: LintReport) -> None:
    """The text format (``mir.boundaries.text_lines``): paths and messages literal."""
    from mir.boundaries import text_lines

    for parts in text_lines(report):
        say_parts(*parts)
