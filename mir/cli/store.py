"""``mir store status|migrate``: where the ledger and agent states live, and moving the
local ones into the fleet store; ``mir worker``: deciding the flows submitted to it."""

from __future__ import annotations

from typing import Any

import typer

from mir.cli.options import FORMAT, JSON, METRICS, PROJECT
from mir.cli.output import chosen_format, print_json, say
from mir.cli.variadic import VariadicCommand

WORKER_AGENTS = typer.Argument(
    None, metavar="AGENT", help="Only these agents' submissions (default: every one)."
)
JOBS = typer.Option(1, "-j", "--jobs", min=1, help="Worker processes.")
PROVIDER = typer.Option(None, "--provider", help="Override routes (scripted, rules ...).")
RESPONSES = typer.Option(None, "--responses", help="JSONL of raw outputs (--provider scripted).")


def _show(result: Any, fmt: str | None, as_json: bool) -> None:
    if chosen_format(fmt, as_json) == "json":
        print_json(result.model_dump(mode="json"))
    else:
        say(*result.lines())


def register(app: typer.Typer) -> None:
    store = typer.Typer(
        help="The fleet store (Postgres): its status, and moving local history into it.",
        no_args_is_help=True,
    )

    @store.command("status")
    def status_command(
        as_json: bool = JSON, fmt: str | None = FORMAT, project: str | None = PROJECT
    ) -> None:
        """Which backend holds the ledger and agent states; for the fleet store: reachable,
        schema, row counts, and local history not migrated yet (exit 1)."""
        from mir.runtime import store_status

        status = store_status(project)
        _show(status, fmt, as_json)
        raise typer.Exit(1 if status.warning else 0)

    @store.command("migrate")
    def migrate_command(
        dry_run: bool = typer.Option(False, "--dry-run", help="Count; write nothing."),
        as_json: bool = JSON, fmt: str | None = FORMAT, project: str | None = PROJECT,
    ) -> None:  # fmt: skip
        """Copy the local ledger, agent states, eval, model (and, with a trace lake, drift)
        histories into the fleet store, once: rows there are kept; suspended wins."""
        from mir.drift import copy_drift_history as drift
        from mir.evals import copy_eval_history as evals
        from mir.models import copy_model_history as models
        from mir.runtime import migrate_store

        copies = {"eval runs": evals, "model changes": models, "drift records": drift}
        _show(migrate_store(project, dry_run=dry_run, histories=copies), fmt, as_json)

    app.add_typer(store, name="store")

    @app.command("worker", cls=VariadicCommand)
    def worker_command(
        agents: list[str] | None = WORKER_AGENTS, jobs: int = JOBS,
        provider: str | None = PROVIDER, responses: str | None = RESPONSES,
        metrics: str | None = METRICS, project: str | None = PROJECT,
    ) -> int:  # fmt: skip
        """Decide the flows submitted to the fleet (agent.submit): one at a time per
        process, until Ctrl-C or SIGTERM (the flow in hand finishes first)."""
        from mir.workers import serve_workers

        return serve_workers(agents or [], jobs, project, provider, responses, say, metrics)
