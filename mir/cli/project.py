"""``mir init``: make a folder a mir project (safe to re-run)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_command(
        folder: Path = typer.Argument(
            Path("."), help="Project folder (created if missing).", file_okay=False
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Print what it would change; write nothing."
        ),
    ) -> None:
        """Make a folder a mir project: intent docs, tool.mir settings, capabilities/.

        Writes CLAUDE.md, AGENTS.md, pyproject.toml (or adds the tool.mir table to yours),
        capabilities/__init__.py, and .mir/ to .gitignore. Existing files are left as
        they are; re-running changes nothing.
        """
        from mir.cli.new import render_plan
        from mir.cli.paths import output_folder
        from mir.scaffold import init_project

        output_folder(folder, "FOLDER", parents=True)

        render_plan(init_project(folder, dry_run=dry_run), dry_run)
