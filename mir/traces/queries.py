"""``mir traces list|show|compact|export``: each one use case over the project's store,
from the options as the user gave them (``--since 2d``, ``--agent triage``,
``--source eval``) to what the command shows.

The store is opened and closed here; what its compactions had to set aside is handed to
``warn``, one line each, even when the command then fails (an unknown agent)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mir.storage import output_file
from mir.traces.domain import UNFINISHED, CompactionResult, FlowSummary, TraceEvent
from mir.traces.store import TraceStore

Warn = Callable[[str], None]
EXPORT_FORMATS = ("json", "parquet", "otlp")
# Eval and shadow flows are kept apart by default: they never execute, and a suite of
# 40 cases would bury the real decisions an operator lists traces to find. Replays run in
# production mode (they may execute, or wait for review), so they are listed with them.
SOURCES = ("production", "eval", "shadow", "replay", "all")
DEFAULT_SOURCES = ("production", "replay")


def chosen_sources(source: str | None) -> tuple[str, ...] | None:
    """The sources ``--source`` names (None: all of them); an unknown one is exit 2."""
    from mir.errors import UsageError, did_you_mean

    if source is None:
        return DEFAULT_SOURCES
    if source not in SOURCES:
        close = did_you_mean(source, SOURCES)
        hint = (f"did you mean {close!r}? " if close else "") + "one of " + ", ".join(SOURCES)
        raise UsageError(f"--source: unknown source {source!r}", hint=hint)
    return None if source == "all" else (source,)


@contextmanager
def project_store(project: Path | None, warn: Warn) -> Iterator[TraceStore]:
    """The project's trace store, closed on exit; its warnings go to ``warn``."""
    from mir.project import find_project

    store = TraceStore.for_project(find_project(project))
    try:
        with store:
            yield store
    finally:
        for warning in store.warnings:
            warn(f"warning: {warning}")


def list_traces(
    project: Path | None,
    *,
    warn: Warn,
    agent: str | None = None,
    status: str | None = None,
    since: str | None = None,
    limit: int = 50,
    source: str | None = None,
) -> list[FlowSummary]:
    """Flows, most recently active first (``mir traces list``)."""
    from mir.traces.application import parse_since, resolve_agent

    sources = chosen_sources(source)
    window = parse_since(since) if since else None
    with project_store(project, warn) as store:
        name = resolve_agent(store, agent) if agent is not None else None
        return store.list_flows(
            agent=name, status=status, since=window, limit=limit, source=sources
        )


def listed_json(flow: FlowSummary) -> dict[str, Any]:
    """A listed flow as JSON: the table's word for a flow with no final event, not null."""
    listed = flow.model_dump(mode="json")
    listed["status"] = listed["status"] or UNFINISHED
    return listed


def flow_events(project: Path | None, flow_id: str, *, warn: Warn) -> list[TraceEvent]:
    """Every event of the flow that ``flow_id`` (or a unique prefix of it) names."""
    from mir.traces.application import find_flow

    with project_store(project, warn) as store:
        return find_flow(store, flow_id)


def compact_traces(project: Path | None, *, warn: Warn) -> tuple[CompactionResult, Path]:
    """Fold closed segment files into the database: what was folded, and where."""
    with project_store(project, warn) as store:
        return store.compact(), store.db_path


def export_flows(
    project: Path | None,
    fmt: str,
    output: Path | None,
    *,
    warn: Warn,
    agent: str | None = None,
    since: str | None = None,
    source: str = "all",
) -> int:
    """Write whole flows' events to ``output`` (stdout when None); the events written."""
    from mir.traces.application import parse_since, resolve_agent
    from mir.traces.exporters import export_traces
    from mir.traces.sources import FlowFilter

    if output is not None:
        output_file(output, "--output")  # refused before anything is read
    sources = chosen_sources(source)
    window = parse_since(since) if since else None
    with project_store(project, warn) as store:
        name = resolve_agent(store, agent) if agent is not None else None
        flows = FlowFilter(agent=name, since=window, sources=sources)
        return export_traces(store, fmt, output, flows)  # type: ignore[arg-type]
