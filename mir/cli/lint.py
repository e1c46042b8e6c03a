"""``mir lint``: boundaries (with import-linter contracts), rules, explain."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.lint_direct import print_report, render_text, warn
from mir.cli.options import FORMAT, JSON
from mir.cli.output import chosen_format, console, literal, print_json, say_parts

if TYPE_CHECKING:
    from rich.console import Console

    from mir.boundaries import LintOptions, LintReport

FORMAT_HELP = (
    "Output: text, json, sarif (2.1.0), github (workflow annotations) or junit "
    "(--json is the same as --format json)."
)


def register(app: typer.Typer) -> None:
    lint = typer.Typer(
        help="Lint the architecture: boundaries, layers, intent docs.", no_args_is_help=True
    )
    app.add_typer(lint, name="lint")

    @lint.command("boundaries")
    def boundaries_command(
        root: Path | None = typer.Argument(
            None,
            file_okay=False,
            help="Project folder (default: the nearest folder upward with [tool.mir], "
            "else the current folder).",
        ),
        fmt: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT", help=FORMAT_HELP),
        as_json: bool = JSON,
        baseline: Path | None = typer.Option(
            None, "--baseline", dir_okay=False, help="Known findings: only new ones fail."
        ),
        update_baseline: bool = typer.Option(
            False, "--update-baseline", help="Write the current findings to the baseline."
        ),
        cache_dir: Path | None = typer.Option(
            None, "--cache-dir", file_okay=False, help="Cache folder (default: .mir/cache)."
        ),
        no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write a cache."),
        config: Path | None = typer.Option(
            None, "--config", dir_okay=False, help="import-linter config to check as well."
        ),
        watch: bool = typer.Option(False, "--watch", help="Re-lint on every save."),
    ) -> None:
        """Check layers, capability interfaces, dependencies, cycles and intent docs."""
        from mir.boundaries import FORMATS, LintOptions
        from mir.errors import UsageError

        fmt = chosen_format(fmt, as_json, FORMATS)
        if watch and fmt != "text":
            raise UsageError("--watch renders text only", hint="drop --format or --watch")
        options = LintOptions(
            use_cache=not no_cache,
            cache_dir=cache_dir.resolve() if cache_dir else None,
            baseline=baseline.resolve() if baseline else None,
            update_baseline=update_baseline,
        )
        from mir.importlinter import default_root, lint_project

        if watch:
            _watch(root if root is not None else default_root(), options, config)
            raise typer.Exit(0)
        report = lint_project(root, options, config, warn)
        print_report(report, fmt)
        raise typer.Exit(report.exit_code)

    @lint.command("rules")
    def rules_command(
        as_json: bool = JSON,
        fmt: str | None = FORMAT,
    ) -> None:
        """List every rule with its code (mir's rules, then the import-linter contracts)."""
        import sys

        from mir.importlinter import rule_catalogue, rule_catalogue_json

        as_json = chosen_format(fmt, as_json) == "json"
        header = ("code", "name", "what it checks")
        if as_json:  # every listing command has --json
            print_json(rule_catalogue_json())
            return
        if not sys.stdout.isatty():  # piped: tab-separated, never cut at 80 columns
            for row in (header, *rule_catalogue()):
                typer.echo("\t".join(row))
            return
        from rich.table import Table

        table = Table(*header, box=None, pad_edge=False)
        for row in rule_catalogue():
            table.add_row(*row)
        console().print(table)

    @lint.command("explain")
    def explain_command(
        code: str = typer.Argument(help="A rule code or name, e.g. MIR101 or IL001."),
    ) -> None:
        """Print a rule's documentation (full lines when the output is not a terminal)."""
        import sys

        from mir.importlinter import rule_doc

        doc = rule_doc(code)
        if not sys.stdout.isatty():  # piped: the Markdown as written, no 80-column cut
            typer.echo(doc.rstrip())
            return
        from rich.markdown import Markdown

        console().print(Markdown(f"# {doc}"))


def _watch(root: Path, options: LintOptions, config: Path | None) -> None:
    from mir.importlinter import watch_line, watch_project

    out = console()

    def show(report: LintReport) -> None:
        _clear(out)
        render_text(report)
        out.print(literal(watch_line(report, root), style="dim"))  # the root: literal

    def show_error(exc: Exception) -> None:
        _clear(out)
        say_parts(("error:", "bold red"), " ", str(exc))  # it may quote "[tool.mir]"
        out.print("[dim]watching (Ctrl-C to stop)[/]", markup=True)

    watch_project(root, options, config, warn, show, show_error)


# What `clear` writes: home, erase the screen, erase the scrollback. Erasing the screen
# alone leaves the last run's findings a scroll away, where they read as current.
CLEAR = "\x1b[H\x1b[2J\x1b[3J"


def _clear(out: Console) -> None:
    """Clear the terminal before a run's report; never in a pipe or on a dumb terminal."""
    if out.is_terminal and not out.is_dumb_terminal:
        out.file.write(CLEAR)
        out.file.flush()
