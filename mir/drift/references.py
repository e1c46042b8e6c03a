"""Frozen references (``mir drift snapshot``), a metric's history (``mir drift
history``) and the rolling breaker (``mir drift watch``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from mir.drift import tables
from mir.drift.domain import DriftReport, HistoryPoint, Window
from mir.drift.history_log import drift_log
from mir.drift.monitor import _known_agents, _project, _resolve, _trace_agents
from mir.drift.queries import DriftQueries, Selection
from mir.drift.suspensions import check
from mir.drift.windows import DEFAULT_REFERENCE, WindowOptions, parse_duration
from mir.errors import UsageError
from mir.traces import TraceStore


def snapshot(
    agent: str, name: str, project: str | Path | None = None, options: WindowOptions | None = None
) -> Window:
    """Freeze the decisions of a window (default: the last 7 days) as reference ``name``."""
    options = options or WindowOptions(window=DEFAULT_REFERENCE)
    options.check()
    proj = _project(project)
    known = _known_agents(proj)
    now = options.now or datetime.now(UTC)
    with (
        TraceStore.for_project(proj) as traces,
        traces.analysis(write=True, tables=tables.TABLES) as (con, events, writable),
    ):
        [resolved] = _resolve([agent], sorted({*known, *_trace_agents(con, events)}))
        log = drift_log(proj, con)
        if not writable and not log.shared:
            raise UsageError("the trace store is read-only: a reference cannot be saved")
        queries = DriftQueries(con, events)
        if options.last is not None:
            selection = Selection(current_last=options.last, reference_last=1)
            queries.select([resolved], selection, None)
            queries.use(resolved)
        else:
            span = parse_duration(options.window or DEFAULT_REFERENCE, "--window")
            queries.select([resolved], Selection(now - span, now, now, now), now - span)
        queries.use(resolved)
        found = queries.bounds()["current"]
        if not found.n or found.first is None or found.last is None:
            raise UsageError(
                f"no production decisions of {resolved} in that window: nothing to freeze",
                hint="widen it (--window 30d) or wait for decisions",
            )
        log.save_reference(resolved, name, found.first, found.last, found.n, now)
    return Window(label=f"snapshot {name}", start=found.first, end=found.last, decisions=found.n)


def history(
    agent: str, metric: str | None = None, project: str | Path | None = None, limit: int = 500
) -> list[HistoryPoint]:
    proj = _project(project)
    known = _known_agents(proj)
    with TraceStore.for_project(proj) as traces, traces.analysis(write=False) as (con, events, _):
        [resolved] = _resolve([agent], sorted({*known, *_trace_agents(con, events)}))
        log = drift_log(proj, con)
        points = log.history(resolved, metric, limit)
        if metric is not None and not points:
            recorded = log.metrics_recorded(resolved)
            if recorded and metric not in recorded:
                raise UsageError(
                    f"no metric {metric!r} recorded for {resolved}",
                    hint=f"recorded: {', '.join(recorded)}",
                )
    return points


def watch(
    project: str | Path | None,
    agents: Sequence[str],
    options: WindowOptions,
    every: float,
    iterations: int | None,
    on_report: Callable[[DriftReport], None],
) -> int:
    """Run ``check`` every ``every`` seconds (``iterations`` times, or until interrupted).
    A separate process: decisions never wait for it (they append to their segments).

    A change to the project's models.toml (a promotion, a new canary) runs the next
    check at once instead of after ``every``: each check reads the registry afresh."""
    changed = threading.Event()
    from mir.models import RegistryWatcher  # the registry's modules: only to watch

    subscription = RegistryWatcher.for_root(_project(project).root).subscribe(
        lambda registry: changed.set()
    )
    done = 0
    worst = 0
    try:
        while iterations is None or done < iterations:
            started = time.monotonic()
            changed.clear()
            report = check(
                project,
                agents,
                options.model_copy(update={"now": None}) if options.now is None else options,
            )
            on_report(report)
            worst = max(worst, 1 if report.past_suspend else 0)
            done += 1
            if iterations is not None and done >= iterations:
                break
            changed.wait(max(0.0, every - (time.monotonic() - started)))
    finally:
        subscription.close()
    return worst
