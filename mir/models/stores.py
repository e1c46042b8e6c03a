"""Which backend holds a project's model registry history: the fleet store (Postgres)
when ``[tool.mir.store] url`` or ``$MIR_STORE_URL`` names one, else
``.mir/models.duckdb``, exactly as before (``mir.runtime.stores`` decides the ledger's
the same way). ``models.toml`` itself stays a file of each checkout."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mir.errors import ConfigError
from mir.models.history import ModelChange, ModelHistory
from mir.storage import FleetStore, StoreSettings, quiet_pool_log

if TYPE_CHECKING:
    from mir.models.history_pg import PostgresModelHistory
    from mir.project import Project


def model_log(root: Path) -> ModelHistory | PostgresModelHistory:
    """The history of the registry of the project at ``root``."""
    store = FleetStore.configured(_settings(root))
    if store is not None:
        from mir.models.history_pg import PostgresModelHistory

        quiet_pool_log()  # a server that is down: one line, not one per retry
        return PostgresModelHistory(store)
    return ModelHistory(root)


def record(root: Path, changes: list[ModelChange]) -> None:
    """Record changes that edit no file (a refused promotion)."""
    model_log(root).record(changes)


def changes(root: Path, name: str | None = None) -> list[ModelChange]:
    """Every recorded change (of one name), oldest first; no history means none."""
    return model_log(root).changes(name)


def copy_model_history(project: Project, dry_run: bool) -> tuple[int, int]:
    """``mir store migrate``: this host's ``.mir/models.duckdb`` changes into the fleet
    store's history (each change once); (copied, already there). Local mode: nothing."""
    store = FleetStore.configured(_settings(project.root))
    if store is None:
        return 0, 0
    from mir.models.history_pg import PostgresModelHistory

    quiet_pool_log()
    local = ModelHistory(project.root).changes()
    return PostgresModelHistory(store).copy_from(local, dry_run=dry_run)


def _settings(root: Path) -> StoreSettings | None:
    """``[tool.mir.store]`` of the project at ``root``; None for a folder that holds no
    mir project (``$MIR_STORE_URL`` alone decides then). Whoever found the project
    reported a broken ``[tool.mir]`` already: the registry never needed more of it."""
    from mir.project import load_project_at

    if not (root / "pyproject.toml").is_file():
        return None
    try:
        project = load_project_at(root)
    except ConfigError:
        return None
    return project.section("store", StoreSettings)
