"""``mir lint``: boundaries (with import-linter contracts), rules, explain."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.lint_direct import (
    cache_folder_for,
    contract_findings,
    default_root,
    lint_project,
    render_text,
)
from mir.cli.output import console

if TYPE_CHECKING:
    from mir.boundaries import LintOptions, LintReport

FORMAT_HELP = "Output: text, json, sarif (2.1.0), github (workflow annotations) or junit."


def register(app: typer.Typer) -> None:
    lint = typer.Typer(help="Lint the architecture: boundaries, layers, intent docs.")
    app.add_typer(lint, name="lint")

    @lint.command("boundaries")
    def boundaries_command(
        root: Path | None = typer.Argument(
            None,
            file_okay=False,
            help="Project folder (default: the nearest folder upward with [tool.mir], "
            "else the current folder).",
        ),
        fmt: str = typer.Option("text", "--format", "-f", help=FORMAT_HELP),
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

        if fmt not in FORMATS:
            raise UsageError(f"unknown --format '{fmt}'", hint=f"use one of {', '.join(FORMATS)}")
        if watch and fmt != "text":
            raise UsageError("--watch renders text only", hint="drop --format or --watch")
        root = root if root is not None else default_root()
        options = LintOptions(
            use_cache=not no_cache,
            cache_dir=cache_dir.resolve() if cache_dir else None,
            baseline=baseline.resolve() if baseline else None,
            update_baseline=update_baseline,
        )
        if watch:
            _watch(root, options, config)
            raise typer.Exit(0)
        report = lint_project(root, options, config)
        if fmt == "text":
            render_text(report)
        else:
            from mir.boundaries import render

            typer.echo(render(report, fmt))
        raise typer.Exit(report.exit_code)

    @lint.command("rules")
    def rules_command() -> None:
        """List every rule with its code."""
        from rich.table import Table

        from mir.boundaries import all_rules

        table = Table("code", "name", "what it checks", box=None, pad_edge=False)
        for rule in all_rules():
            table.add_row(rule.code, rule.name, rule.summary)
        console().print(table)

    @lint.command("explain")
    def explain_command(
        code: str = typer.Argument(help="A rule code or name, e.g. MIR101."),
    ) -> None:
        """Print a rule's documentation."""
        from rich.markdown import Markdown

        from mir.boundaries import rule_for
        from mir.errors import UsageError

        rule = rule_for(code)
        if rule is None:
            raise UsageError(f"no rule '{code}'", hint="`mir lint rules` lists them")
        console().print(Markdown(f"# {rule.doc}"))


def _watch(root: Path, options: LintOptions, config: Path | None) -> None:
    import time

    from mir.boundaries import watch_boundaries
    from mir.errors import MirUserError

    out = console()
    try:
        folder = cache_folder_for(root, options)
    except MirUserError:
        folder = None  # a broken config: the first run says so, and watching goes on

    def show(report: LintReport) -> None:
        out.clear()
        render_text(report)
        stats = report.stats
        out.print(
            f"[dim]{time.strftime('%H:%M:%S')} re-parsed {stats.parsed}, cached "
            f"{stats.cached} - watching {root} (Ctrl-C to stop)[/]",
            markup=True,
        )

    def show_error(exc: Exception) -> None:
        out.clear()
        out.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        out.print("[dim]watching (Ctrl-C to stop)[/]", markup=True)

    watch_boundaries(
        root,
        options,
        show,
        show_error,
        extra_findings=lambda: contract_findings(root, config, folder),
        extra_files=[config] if config is not None else [],
    )
