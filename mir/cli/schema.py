"""``mir schema``: the JSON schemas of contracts, intent docs, eval suites, eval reports and
[tool.mir]."""

from __future__ import annotations

from pathlib import Path

import typer

from mir.cli.output import chosen_format, console, format_option, json_option, note


def register(app: typer.Typer) -> None:
    @app.command("schema")
    def schema_command(
        write: Path | None = typer.Option(
            None, "--write", help="Write every schema into this folder (e.g. schemas/)."
        ),
        check: Path | None = typer.Option(
            None, "--check", help="Exit 1 when the schemas in this folder are stale."
        ),
        name: str | None = typer.Argument(
            None, help="Print one schema, e.g. agent-contract.schema.json."
        ),
        as_json: bool = json_option("List the schema names as a JSON array (= --format json)."),
        fmt: str | None = format_option(("text", "json")),
    ) -> int:
        """Print or write the JSON schemas of the files mir reads (for editor completion)."""
        from mir.schemas import schema_answer

        as_json = chosen_format(fmt, as_json, ("text", "json")) == "json"
        answer = schema_answer(name, write=write, check=check, as_json=as_json)
        console().out(answer.out, end="")
        for line in answer.notes:
            note(line)
        return answer.code
