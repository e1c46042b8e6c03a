"""``mir doctor``: what is wrong with this set-up, one row per check."""

from __future__ import annotations

import typer

from mir.cli.options import FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, print_json, print_rows, say


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        as_json: bool = JSON, fmt: str | None = FORMAT, project: str | None = PROJECT
    ) -> None:
        """Check the machine and the project (llama.cpp build, model digests, store,
        contracts, suites, models.toml, keys, chromium): exit 1 on any problem."""
        from mir.doctor import COLUMNS, diagnose

        diagnosis = diagnose(project)
        if chosen_format(fmt, as_json) == "json":
            print_json(diagnosis.as_json())
        else:
            print_rows(COLUMNS, diagnosis.rows(), wrap=("found", "fix"))
            say(diagnosis.summary())
        raise typer.Exit(diagnosis.exit_code)
