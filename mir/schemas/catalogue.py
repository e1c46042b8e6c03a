"""The JSON schemas mir publishes (``mir schema``): the formats users write, what
``--format json`` prints, and each capability's ``[tool.mir.<name>]`` settings.

Composed here, above the capabilities, because contracts must not depend on the
capabilities that read it; the CLI renders what ``rendered_schemas`` returns."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SchemaAnswer:
    """What ``mir schema`` prints: ``out`` on stdout as it is, ``notes`` a line each on
    stderr, and its exit code."""

    out: str = ""
    notes: list[str] = field(default_factory=list)
    code: int = 0


def schema_answer(
    name: str | None, *, write: Path | None, check: Path | None, as_json: bool
) -> SchemaAnswer:
    """``mir schema``: one schema (``name``), the stale check of ``check``, every schema
    written into ``write``, or the list of names (``as_json``: a JSON array)."""
    from mir.storage import input_folder, output_folder

    if check is not None:
        input_folder(check, "--check")
    if write is not None:
        output_folder(write, "--write")
    schemas = rendered_schemas()
    if name is not None:
        return SchemaAnswer(schemas[schema_file(name, schemas)])
    if check is not None:
        stale = stale_lines(check, schemas)
        return SchemaAnswer(notes=stale, code=1 if stale else 0)
    if write is not None:
        return SchemaAnswer("".join(f"wrote {path}\n" for path in write_schemas(write, schemas)))
    if as_json:
        return SchemaAnswer(json.dumps(sorted(schemas), indent=2) + "\n")
    return SchemaAnswer("".join(f"{file}\n" for file in schemas))


def rendered_schemas() -> dict[str, str]:
    """Every schema file's name and its text (stable JSON: sorted keys, a final newline)."""
    return {
        file: json.dumps(body, indent=2, sort_keys=True) + "\n"
        for file, body in all_schemas().items()
    }


def stale_schemas(folder: Path, schemas: dict[str, str]) -> list[str]:
    """The files in ``folder`` that differ from ``schemas`` (or are missing)."""
    return [file for file, text in schemas.items() if _read(folder / file) != text]


def stale_lines(folder: Path, schemas: dict[str, str]) -> list[str]:
    """``stale_schemas`` as ``mir schema --check`` reports them: each with the fix."""
    return [
        f"stale: {folder / file} (run `mir schema --write {folder}`)"
        for file in stale_schemas(folder, schemas)
    ]


def write_schemas(folder: Path, schemas: dict[str, str]) -> list[Path]:
    """Write every schema into ``folder`` (created); the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file, text in schemas.items():
        (folder / file).write_text(text, encoding="utf-8")
        written.append(folder / file)
    return written


def schema_file(name: str, schemas: dict[str, str]) -> str:
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
    """The formats users write, plus each capability's ``[tool.mir.<name>]`` settings."""
    from mir.alerts import ReviewSettings
    from mir.boundaries import LintSettings
    from mir.contracts import json_schemas
    from mir.drift import AlertSettings, DriftReport
    from mir.evals import EvalReport
    from mir.inference import ModelSettings
    from mir.models import ModelEntry
    from mir.privacy import PiiSettings
    from mir.releases import CanaryCheck, CanarySettings, ModelComparison
    from mir.storage import StoreSettings
    from mir.traces import OtelSettings, TraceSettings
    from mir.workers import WorkerSettings

    sections = {
        "lint": LintSettings,
        "model": ModelSettings,
        "traces": TraceSettings,
        "alerts": AlertSettings,
        "review": ReviewSettings,
        "models": CanarySettings,
        "store": StoreSettings,
        "workers": WorkerSettings,
        "privacy": PiiSettings,
        "otel": OtelSettings,
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
