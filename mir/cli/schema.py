"""``mir schema``: the JSON schemas of contracts, intent docs, eval suites, eval reports and
[tool.mir]."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mir.cli.output import chosen_format, console, error_console, format_option, json_option


def _render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


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
        from mir.cli.paths import input_folder, output_folder

        as_json = chosen_format(fmt, as_json, ("text", "json")) == "json"
        if check is not None:
            input_folder(check, "--check")
        if write is not None:
            output_folder(write, "--write")
        schemas = {file: _render(body) for file, body in all_schemas().items()}
        if name is not None:
            console().out(schemas[_schema_file(name, schemas)], end="")
            return 0
        if check is not None:
            stale = [f for f, text in schemas.items() if _read(check / f) != text]
            for file in stale:
                error_console().print(
                    f"stale: {check / file} (run `mir schema --write {check}`)", markup=False
                )
            return 1 if stale else 0
        if write is not None:
            write.mkdir(parents=True, exist_ok=True)
            for file, text in schemas.items():
                (write / file).write_text(text, encoding="utf-8")
                console().print(f"wrote {write / file}", markup=False)
            return 0
        if as_json:
            console().out(json.dumps(sorted(schemas), indent=2))
            return 0
        for file in schemas:
            console().print(file, markup=False)
        return 0


def _schema_file(name: str, schemas: dict[str, str]) -> str:
    """The file a user means: the listed name, or that name without `.schema.json` (what
    a newcomer types after reading `mir schema`'s list)."""
    from mir.errors import UsageError, did_you_mean

    stems = {file.removesuffix(".schema.json"): file for file in schemas}
    file = name if name in schemas else stems.get(name.removesuffix(".json"))
    if file is not None:
        return file
    close = did_you_mean(name.removesuffix(".schema.json"), stems)
    hint = f"did you mean `{close}`? " if close else ""
    raise UsageError(f"unknown schema {name!r}", hint=f"{hint}one of: {', '.join(sorted(stems))}")


def all_schemas() -> dict[str, dict]:
    """The formats users write, plus each capability's ``[tool.mir.<name>]`` settings.

    Composed here because only the shell sees every capability: contracts must not
    depend on the capabilities that read it.
    """
    from mir.alerts import ReviewSettings
    from mir.boundaries import LintSettings
    from mir.contracts import json_schemas
    from mir.drift import AlertSettings, DriftReport
    from mir.evals import EvalReport
    from mir.inference import ModelSettings
    from mir.models import ModelEntry
    from mir.releases import CanaryCheck, CanarySettings, ModelComparison
    from mir.traces import TraceSettings

    sections = {
        "lint": LintSettings,
        "model": ModelSettings,
        "traces": TraceSettings,
        "alerts": AlertSettings,
        "review": ReviewSettings,
        "models": CanarySettings,
    }
    return {
        **json_schemas(),
        # what `mir eval --format json` prints (an output, so its serialized form)
        "eval-report.schema.json": EvalReport.model_json_schema(mode="serialization"),
        **{f"tool-mir-{name}.schema.json": m.model_json_schema() for name, m in sections.items()},
        # what `mir drift --format json` prints
        "drift-report.schema.json": DriftReport.model_json_schema(),
        # the committed registry, models.toml (`mir models`)
        "models-registry.schema.json": _registry_schema(ModelEntry.model_json_schema()),
        # what `mir models compare|check --format json` print
        "models-compare.schema.json": ModelComparison.model_json_schema(mode="serialization"),
        "models-check.schema.json": CanaryCheck.model_json_schema(mode="serialization"),
    }


def _registry_schema(entry: dict) -> dict:
    """``models.toml``: a list of ``[[models]]`` tables, each one ``ModelEntry``."""
    defs = entry.pop("$defs", {})
    return {
        "title": "models.toml",
        "description": "The model registry: every version of every model a route may name.",
        "type": "object",
        "additionalProperties": False,
        "properties": {"models": {"type": "array", "items": {"$ref": "#/$defs/ModelEntry"}}},
        "$defs": {**defs, "ModelEntry": entry},
    }


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None
