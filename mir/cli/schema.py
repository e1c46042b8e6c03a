"""``mir schema``: the JSON schemas of contracts, intent docs, eval suites, eval reports and
[tool.mir]."""

from __future__ import annotations

import json
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
        from mir.schemas import rendered_schemas, schema_file, stale_lines, write_schemas
        from mir.storage import input_folder, output_folder

        as_json = chosen_format(fmt, as_json, ("text", "json")) == "json"
        if check is not None:
            input_folder(check, "--check")
        if write is not None:
            output_folder(write, "--write")
        schemas = rendered_schemas()
        if name is not None:
            console().out(schemas[schema_file(name, schemas)], end="")
            return 0
        if check is not None:
            stale = stale_lines(check, schemas)
            for line in stale:
                note(line)
            return 1 if stale else 0
        if write is not None:
            for path in write_schemas(write, schemas):
                console().print(f"wrote {path}", markup=False)
            return 0
        if as_json:
            console().out(json.dumps(sorted(schemas), indent=2))
            return 0
        for file in schemas:
            console().print(file, markup=False)
        return 0
