"""Which backend holds a project's eval run history: the fleet store (Postgres) when
``[tool.mir.store] url`` or ``$MIR_STORE_URL`` names one, else ``.mir/evals.duckdb``,
exactly as before (``mir.runtime.stores`` decides the ledger's the same way)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mir.evals.history import EvalHistory
from mir.storage import FleetStore, StoreSettings, quiet_pool_log

if TYPE_CHECKING:
    from mir.evals.history_pg import PostgresEvalHistory
    from mir.project import Project


def eval_log(project: Project) -> EvalHistory | PostgresEvalHistory:
    """The project's eval history (``mir eval`` records into it, ``history`` reads it)."""
    store = FleetStore.configured(project.section("store", StoreSettings))
    if store is not None:
        from mir.evals.history_pg import PostgresEvalHistory

        quiet_pool_log()  # a server that is down: one line, not one per retry
        return PostgresEvalHistory(store)
    return EvalHistory.for_project(project)


def copy_eval_history(project: Project, dry_run: bool) -> tuple[int, int]:
    """``mir store migrate``: this host's ``.mir/evals.duckdb`` runs into the fleet
    store's history (each run id once); (copied, already there). Local mode: nothing."""
    store = FleetStore.configured(project.section("store", StoreSettings))
    if store is None:
        return 0, 0
    from mir.evals.history_pg import PostgresEvalHistory

    quiet_pool_log()
    local = EvalHistory.for_project(project)
    return PostgresEvalHistory(store).copy_from(local, dry_run=dry_run)
