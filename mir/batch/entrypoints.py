"""``mir run agent NAME --batch FILE``: every row of a JSONL file decided once.

Rows already decided by an earlier run into the same results file are skipped (by
their key); a row an earlier run handed to a decision and never finished is looked up
in the traces under its flow id: an outcome there is taken as it is, a flow that never
started is decided now (same flow id), one cut off in the middle is reported as
``interrupted`` and not decided again. The results file is rewritten at the end of
every run, also one stopped by Ctrl-C or an error.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mir.batch.deciding import Plan, decide_rows
from mir.batch.fleet import check_workers_mode, decide_through_workers, settle_in_fleet
from mir.batch.journal import Journal, journal_path, opened_journal
from mir.batch.outcomes import (
    INTERRUPTED,
    BatchProgress,
    BatchReport,
    RowOutcome,
    counts,
    from_events,
)
from mir.batch.results import check_out, write_results
from mir.batch.rows import BatchRow, flow_id_of, parse_rows
from mir.errors import UsageError
from mir.runtime import Stop, first_interrupt_stops


def default_out(inputs: Path) -> Path:
    return inputs.with_name(f"{inputs.stem}.results.jsonl")


def run_batch(
    ref: str,
    inputs: Path,
    *,
    out: Path | None = None,
    key: str | None = None,
    jobs: int = 1,
    project: str | Path | None = None,
    provider: str | None = None,
    responses: str | None = None,
    context: str | None = None,
    role: str = "agent",
    requested_by: str | None = None,
    progress: BatchProgress | None = None,
    stop: Stop | None = None,
    workers: bool = False,
) -> BatchReport:
    """Decide every row of ``inputs`` not decided yet into ``out``; the report.
    ``context`` (JSON or ``@FILE``, as ``--context``) is every row's world; without it
    the contract's context loader reads each row's. ``workers``: submit the rows to the
    fleet's workers (``mir.batch.fleet``) instead of deciding them here."""
    from mir.project import find_project
    from mir.runtime import load_agent, read_json_object

    if jobs < 1:
        raise UsageError(f"-j {jobs}: at least 1 worker")
    rows = _rows(inputs, key)
    out = out if out is not None else default_out(inputs)
    check_out(out, inputs)
    proj = find_project(Path(project) if project is not None else None)
    if provider == "scripted" and responses is not None:
        _check_replies(Path(responses), len(rows))
    # Loaded once here, first: a bad contract or provider is one error before anything
    # is written, and its name is the one the journal records. N workers load their own:
    # this one is closed before they fork (nothing open is shared with them).
    probe = load_agent(
        ref, project=proj.root, provider=provider, responses=responses, watch_models=False
    )
    try:
        if workers:
            check_workers_mode(probe, provider, jobs)
        plan = Plan(
            ref, str(proj.root), provider, responses,
            None if context is None else read_json_object(context, "--context"), role, requested_by,
            str(journal_path(proj.state_dir, out).with_suffix(".workers")),
        )  # fmt: skip
        redact = getattr(probe.deps.traces, "redact", None)  # pure: usable after close
        where = {"agent": probe.name, "inputs": inputs, "redact": redact}
        with opened_journal(proj.state_dir, out, **where) as journal:
            report = BatchReport(out=out, total=len(rows))
            started = time.monotonic()
            try:
                if workers:
                    todo, waiting = settle_in_fleet(journal, rows, probe.deps.submissions, report)
                    decide_through_workers(
                        rows, todo, waiting, probe, plan, journal, report, progress, stop or Stop()
                    )
                else:
                    todo = _settle_earlier(journal, rows, probe.deps, report)
                    if jobs > 1 and len(todo) > 1:
                        probe, closing = None, probe
                        closing.close()
                    _decide(todo, plan, jobs, journal, report, progress, stop or Stop(), probe)
            finally:
                report.outcomes = [journal.done[r.key] for r in rows if r.key in journal.done]
                report.statuses = counts(report.outcomes)
                report.seconds = time.monotonic() - started
                write_results(out, report.outcomes)
    finally:
        if probe is not None:
            probe.close()
    return report


def _rows(inputs: Path, key: str | None) -> list[BatchRow]:
    try:
        text = inputs.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"--batch {inputs}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--batch {inputs} is a folder", hint="name a .jsonl file") from None
    except UnicodeDecodeError:
        raise UsageError(f"--batch {inputs} is not UTF-8 text") from None
    return parse_rows(text.splitlines(), str(inputs), key)


def _check_replies(responses: Path, rows: int) -> None:
    from mir.inference import read_responses

    have = len(read_responses(responses))
    if have < rows:
        raise UsageError(
            f"--responses {responses}: {have} replies for {rows} rows",
            hint="reply i answers row i: one line per row",
        )


def _settle_earlier(
    journal: Journal, rows: list[BatchRow], deps: Any, report: BatchReport
) -> list[BatchRow]:
    """The rows still to decide, once those an earlier run left in doubt are settled
    from their flows' events: an outcome is taken; a flow cut off before it claimed an
    execution is closed (``aborted``, ``interrupted``) and its row decided again under a
    new flow id; one cut off after is reported ``interrupted``."""
    from mir.runtime import close_interrupted

    doubt = journal.in_doubt()
    todo = []
    for row in rows:
        if row.key in journal.done:
            report.skipped += 1
            continue
        if row.key in doubt:
            flow_id = doubt[row.key]
            events = deps.traces.flow(flow_id)
            outcome = from_events(row.key, row.line, flow_id, events)
            cut = outcome is not None and outcome.status == INTERRUPTED
            if cut and close_interrupted(deps, flow_id, events) is not None:
                # closed, nothing ran: decided again as a new flow
                journal.start(row.key, flow_id_of(journal.batch_id, f"{row.key}@{flow_id}"))
                report.retried += 1
                outcome = None
            if outcome is not None:
                journal.finish(outcome)
                report.recovered += 1
                continue
        todo.append(row)
    return todo


def _decide(
    todo: list[BatchRow],
    plan: Plan,
    jobs: int,
    journal: Journal,
    report: BatchReport,
    progress: BatchProgress | None,
    stop: Stop,
    agent: Any,
) -> None:
    def hand(row: BatchRow) -> str:
        flow_id = journal.started.get(row.key) or flow_id_of(journal.batch_id, row.key)
        journal.start(row.key, flow_id)
        return flow_id

    def done(outcome: RowOutcome) -> None:
        journal.finish(outcome)
        report.decided += 1
        if progress is not None:
            progress.advance(outcome)

    on_stop = progress.stopping if progress is not None else (lambda: None)
    if progress is not None:
        progress.start(report.total, report.total - len(todo))
    try:
        with first_interrupt_stops(stop, on_stop):
            decide_rows(
                todo, plan, jobs=min(jobs, max(1, len(todo))), hand=hand, done=done, stop=stop,
                agent=agent,
            )  # fmt: skip
    finally:
        report.stopped = bool(stop)
        if progress is not None:
            progress.finish()
