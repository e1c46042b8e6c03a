"""Project settings: the ``[tool.mir]`` table of a project's pyproject.toml.

Each capability owns the schema of its own sub-table (``[tool.mir.lint]``,
``[tool.mir.model]`` ...) and validates it through ``Project.section``, so this module
never has to know about lint rules or model routes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mir.errors import did_you_mean


class MirSettings(BaseModel):
    """Top level of ``[tool.mir]``."""

    model_config = ConfigDict(extra="forbid")

    capabilities: str = Field(
        "capabilities", description="Folder (relative to the project root) holding capabilities."
    )
    shared: list[str] = Field(
        default_factory=list,
        description="Modules every capability may import (a shared kernel), e.g. 'app.errors'.",
    )
    templates: str | None = Field(
        None, description="Folder of jinja2 templates overriding mir's scaffolding templates."
    )
    state_dir: str = Field(".mir", description="Local, git-ignored state: traces, caches.")
    lint: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.lint] settings.")
    model: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.model] defaults.")
    traces: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.traces] settings.")
    eval: dict[str, Any] = Field(default_factory=dict, description="[tool.mir.eval] settings.")
    alerts: dict[str, Any] = Field(
        default_factory=dict,
        description="[tool.mir.alerts]: where drift warnings and review alerts go.",
    )
    review: dict[str, Any] = Field(
        default_factory=dict, description="[tool.mir.review]: the review inbox's address."
    )
    models: dict[str, Any] = Field(
        default_factory=dict, description="[tool.mir.models]: the canary's automatic rollback."
    )
    store: dict[str, Any] = Field(
        default_factory=dict,
        description="[tool.mir.store]: the Postgres shared by many hosts (unset: local files).",
    )
    workers: dict[str, Any] = Field(
        default_factory=dict, description="[tool.mir.workers]: heartbeats of `mir worker`."
    )
    otel: dict[str, Any] = Field(
        default_factory=dict,
        description="[tool.mir.otel]: live OpenTelemetry export of every flow's spans.",
    )
    privacy: dict[str, Any] = Field(
        default_factory=dict,
        description="[tool.mir.privacy]: how personal data is recognized before a prompt leaves.",
    )


def describe_validation_error(
    exc: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line naming the first offending field, e.g. ``lint.forbidden: Input should be ...``.

    One line on purpose: the CLI contract is one error line. An unknown key is named
    first (a typo is the cause; a required key it leaves missing, the consequence), with
    the closest key ``model`` knows: ``capabilites: unknown key (did you mean ...)``.
    """
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    field = ".".join(part for part in (prefix, ".".join(str(p) for p in loc)) if part)
    message = first["msg"]
    if first["type"] == "extra_forbidden" and loc:
        message = "unknown key"
        if model is not None:
            keys = known_keys(model.model_json_schema(), loc[:-1])
            close = did_you_mean(loc[-1], keys)
            message += f" (did you mean `{close}`?)" if close else ""
    more = len(errors) - 1
    suffix = f" (+{more} more)" if more else ""
    return f"{field or '<root>'}: {message}{suffix}"


def known_keys(schema: dict[str, Any], loc: tuple[Any, ...]) -> list[str]:
    """The keys the JSON schema allows in the mapping at ``loc`` (for "did you mean")."""
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> dict[str, Any]:
        for _ in range(20):  # bounded: a $ref cycle must not hang an error message
            if not isinstance(node, dict):
                return {}
            if "$ref" in node:
                node = definitions.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            elif "properties" not in node and "anyOf" in node:
                node = next((a for a in node["anyOf"] if a.get("type") != "null"), {})
            else:
                return node
        return {}

    node = resolve(schema)
    for part in loc:
        if isinstance(part, int):
            node = resolve(node.get("items", {}))
        elif part in node.get("properties", {}):
            node = resolve(node["properties"][part])
        elif isinstance(node.get("additionalProperties"), dict):
            node = resolve(node["additionalProperties"])
        else:
            return []
    return sorted(node.get("properties", {}))
