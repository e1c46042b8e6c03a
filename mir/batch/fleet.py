"""``mir run agent NAME --batch FILE --workers``: the rows submitted to the fleet's
workers (``mir worker`` on any host) instead of decided in this host's processes.

Each row's ``start`` (key, flow id) is fsynced in the journal before its submission,
then every submitted row's outcome is awaited (``Agent.result``) and journaled. A
re-run settles a row left in doubt from the fleet, not from local traces (its worker
may be on another host): an outcome there is taken; a flow still queued is awaited; one
never committed (killed between the journal and the submit) is submitted again under
the same flow id. Ctrl-C stops submitting and waiting; what was submitted is decided by
the workers all the same, and the next run collects it.
"""

from __future__ import annotations

from typing import Any

from mir.batch.journal import Journal
from mir.batch.outcomes import BatchProgress, BatchReport, RowOutcome, from_record
from mir.batch.rows import BatchRow, flow_id_of
from mir.errors import UsageError
from mir.runtime import ResultTimeout, Stop, first_interrupt_stops


def check_workers_mode(agent: Any, provider: str | None, jobs: int) -> None:
    """What ``--workers`` cannot take: no fleet store, a provider of this host's, -j."""
    if agent.deps.submissions is None:
        raise UsageError(
            "--workers needs the fleet store: rows are submitted to Postgres",
            hint="set [tool.mir.store] url (or $MIR_STORE_URL); without it, drop --workers",
        )
    if provider is not None or jobs != 1:
        raise UsageError(
            "--provider, --responses and -j are the workers' with --workers",
            hint="pass them to `mir worker`",
        )


def settle_in_fleet(
    journal: Journal, rows: list[BatchRow], queue: Any, report: BatchReport
) -> tuple[list[BatchRow], dict[str, str]]:
    """The rows to submit, and those submitted earlier still to await (key -> flow)."""
    doubt = journal.in_doubt()
    todo, waiting = [], {}
    for row in rows:
        if row.key in journal.done:
            report.skipped += 1
            continue
        flow_id = doubt.get(row.key)
        if flow_id is not None:
            found, queued = queue.where_is(flow_id)
            if queued:
                waiting[row.key] = flow_id
                continue
            if found is not None:
                journal.finish(from_record(row.key, row.line, found))
                report.recovered += 1
                continue
        todo.append(row)
    return todo, waiting


def decide_through_workers(
    rows: list[BatchRow],
    todo: list[BatchRow],
    waiting: dict[str, str],
    agent: Any,
    plan: Any,
    journal: Journal,
    report: BatchReport,
    progress: BatchProgress | None,
    stop: Stop,
) -> None:
    lines = {row.key: row.line for row in rows}
    pending = dict(waiting)
    on_stop = progress.stopping if progress is not None else (lambda: None)
    if progress is not None:
        progress.start(report.total, report.total - len(todo) - len(waiting))
    try:
        with first_interrupt_stops(stop, on_stop):
            for row in todo:
                if stop:
                    return
                flow_id = journal.started.get(row.key) or flow_id_of(journal.batch_id, row.key)
                journal.start(row.key, flow_id)
                agent.submit(
                    row.input, plan.context, role=plan.role, requested_by=plan.requested_by,
                    flow_id=flow_id,
                )  # fmt: skip
                pending[row.key] = flow_id
            for key, flow_id in pending.items():
                record = _await(agent, flow_id, stop)
                if record is None:
                    return
                _done(from_record(key, lines[key], record.model_dump()), journal, report, progress)
    finally:
        report.stopped = bool(stop)
        if progress is not None:
            progress.finish()


def _await(agent: Any, flow_id: str, stop: Stop) -> Any:
    """The flow's record once a worker decided it; None once Ctrl-C stopped the run."""
    while not stop:
        try:
            return agent.result(flow_id, timeout=1.0)
        except ResultTimeout:
            continue
    return None


def _done(outcome: RowOutcome, journal: Journal, report: BatchReport, progress: Any) -> None:
    journal.finish(outcome)
    report.decided += 1
    if progress is not None:
        progress.advance(outcome)
