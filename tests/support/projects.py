"""The runtime test project (``tests/fixtures/runtime/project``) copied with its triage
agent's routes replaced: what the back-pressure, registry, shadow and hot-swap tests and
benchmarks all start from."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
CONTRACT = "capabilities/refunds/agents/triage.yaml"


def llama_route(model: str | Path, **options: object) -> str:
    """One llama route (YAML list item); ``model`` a GGUF path or a registry name."""
    extra = "".join(f", {key}: {value}" for key, value in options.items())
    return f"  - {{name: local, provider: llama, model: '{model}', max_tokens: 64{extra}}}\n"


def runtime_project(
    root: Path,
    routes: str,
    *,
    model_settings: str | None = None,
    registry: str | None = None,
    retries: int | None = None,
) -> Path:
    """Copy the fixture to ``root`` with ``routes`` (YAML list items) as triage's only
    routes; ``model_settings`` is appended as ``[tool.mir.model]``, ``registry`` written
    as models.toml."""
    shutil.copytree(FIXTURE, root)
    if model_settings is not None:
        with (root / "pyproject.toml").open("a") as toml:
            toml.write(f"\n[tool.mir.model]\n{model_settings}\n")
    contract = root / CONTRACT
    text = contract.read_text()
    old = text[text.index("routes:") : text.index("cascade_on:")]
    text = text.replace(old, "routes:\n" + routes)
    if retries is not None:
        text = text.replace("retries: 2\n", f"retries: {retries}\n")
    contract.write_text(text)
    if registry is not None:
        (root / "models.toml").write_text(registry)
    return root
