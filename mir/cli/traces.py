"""``mir traces``: list, show, compact, export and verify decision traces."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.cli.output import (
    chosen_format,
    console,
    error_console,
    format_option,
    json_option,
    literal,
    print_listing,
    project_option,
)

if TYPE_CHECKING:
    from mir.traces import FlowSummary, IntegrityReport, TraceEvent, TraceStore

PROJECT = project_option()
AS_JSON = json_option()
FORMAT = format_option()
EXPORT_FORMATS = ("json", "parquet", "otlp")
# Eval and shadow flows are kept apart by default: they never execute, and a suite of
# 40 cases would bury the real decisions an operator lists traces to find. Replays run in
# production mode (they may execute, or wait for review), so they are listed with them.
SOURCES = ("production", "eval", "shadow", "replay", "all")
DEFAULT_SOURCES = ("production", "replay")


@contextmanager
def open_store(project_dir: Path | None) -> Iterator[TraceStore]:
    """The project's trace store (composition root of every command below), closed on
    exit; what its compactions had to set aside is said on stderr, one line each."""
    from mir.project import find_project
    from mir.traces import TraceStore

    store = TraceStore.for_project(find_project(project_dir))
    try:
        with store:
            yield store
    finally:
        for warning in store.warnings:
            error_console().print(f"warning: {warning}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    traces = typer.Typer(help="Inspect, export and verify decision traces.", no_args_is_help=True)

    @traces.command("list")
    def list_command(
        agent: str | None = typer.Option(
            None,
            "--agent",
            help="Only this agent's flows: capability.agent, or the agent name alone when "
            "only one capability has it.",
        ),
        status: str | None = typer.Option(
            None,
            "--status",
            help="Only flows whose current status is this (e.g. executed; unfinished: no "
            "final event yet, still running or its process stopped).",
        ),
        since: str | None = typer.Option(
            None, "--since", help="Only flows active since: ISO time, or 30m, 1h, 2d."
        ),
        limit: int = typer.Option(50, "--limit", min=1, help="At most this many flows."),
        source: str | None = typer.Option(
            None,
            "--source",
            help="production (decisions on a live model), replay (runs on recorded model "
            "answers, e.g. --provider scripted), eval (`mir eval` and promotion-gate runs, "
            "never executed), shadow (a registry shadow version's decisions, never "
            "executed) or all. Default: production and replay.",
        ),
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Decision flows, most recently active first."""
        from mir.traces import parse_since, resolve_agent

        as_json = chosen_format(fmt, as_json) == "json"
        sources = _sources(source)
        window = parse_since(since) if since else None
        with open_store(project) as store:
            name = resolve_agent(store, agent) if agent is not None else None
            flows = store.list_flows(
                agent=name,
                status=status,
                since=window,
                limit=limit,
                source=sources,
            )
        if as_json:
            # the table's word for a flow with no final event, not null
            _print_json([_listed(flow) for flow in flows])
        else:
            render_flows(flows)

    @traces.command("show")
    def show_command(
        flow_id: str = typer.Argument(help="A flow id, or a unique prefix of one."),
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Every step of one flow: status, reasons, model, prompt hash, tokens, cost, latency."""
        from mir.traces import find_flow

        as_json = chosen_format(fmt, as_json) == "json"
        with open_store(project) as store:
            events = find_flow(store, flow_id)
        if as_json:
            _print_json([event.model_dump(mode="json") for event in events])
        else:
            render_flow(events)

    @traces.command("compact")
    def compact_command(project: Path | None = PROJECT) -> None:
        """Fold closed segment files into the DuckDB file (also happens automatically)."""
        with open_store(project) as store:
            result = store.compact()
        console().print(
            f"compacted {result.segments} segment(s), {result.events} event line(s) "
            f"into {store.db_path}"
        )  # unreadable lines: open_store's warning

    @traces.command("export")
    def export_command(
        fmt: str | None = typer.Option(
            None,
            "--format",
            "-f",
            metavar="FORMAT",
            help="json (JSON lines, the default; --json is the same), parquet, or otlp "
            "(OTLP/JSON).",
        ),
        as_json: bool = json_option("Export JSON lines (the same as --format json)."),
        output: Path | None = typer.Option(
            None, "--output", "-o", dir_okay=False, help="File to write (default: stdout)."
        ),
        agent: str | None = typer.Option(
            None, "--agent", help="Only this agent's flows (capability.agent, or the agent name)."
        ),
        since: str | None = typer.Option(
            None, "--since", help="Only flows active since: ISO time, or 30m, 1h, 2d."
        ),
        source: str = typer.Option(
            "all",
            "--source",
            help="Only flows of this source: production, replay, eval, shadow, or all (default).",
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Events, for other tools: JSON lines, Parquet, or OTLP spans (GenAI semconv).
        Filters keep whole flows."""
        from mir.traces import FlowFilter, export_traces, parse_since, resolve_agent

        fmt = chosen_format(fmt, as_json, EXPORT_FORMATS)
        sources = _sources(source)
        window = parse_since(since) if since else None
        if output is not None:
            from mir.cli.paths import output_file

            output_file(output, "--output")
        with open_store(project) as store:
            name = resolve_agent(store, agent) if agent is not None else None
            flows = FlowFilter(agent=name, since=window, sources=sources)
            count = export_traces(store, fmt, output, flows)  # type: ignore[arg-type]
        if output is not None:
            console().print(f"exported {count} event(s) to {output}", markup=False)

    @traces.command("verify")
    def verify_command(
        full: bool = typer.Option(
            False, "--full", help="Re-hash every line, not only those added since the last verify."
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Check the traces against their manifest and re-hash the chain: detects edited,
        removed, reordered or added lines, deleted segments and a deleted database. Then
        check every review's signature against reviewers.toml: unsigned (where the action
        requires signatures), forged, wrong-key and unknown-reviewer approvals."""
        from mir.project import find_project
        from mir.runtime import audit_reviews
        from mir.traces import verify_traces

        with open_store(project) as store:
            report = verify_traces(store, full=full)
            # Signatures are checked even when the chain is broken: an edited review is
            # then named by its flow, whatever else was edited.
            audit = audit_reviews(find_project(project), store, full=full)
        render_integrity(report, store.segments_dir)
        render_reviews(audit)
        if not report.ok or not audit.ok:
            raise typer.Exit(1)

    app.add_typer(traces, name="traces")


def _sources(source: str | None) -> tuple[str, ...] | None:
    """The sources ``--source`` names (None: all of them); an unknown one is exit 2."""
    from mir.errors import UsageError, did_you_mean

    if source is None:
        return DEFAULT_SOURCES
    if source not in SOURCES:
        close = did_you_mean(source, SOURCES)
        hint = (f"did you mean {close!r}? " if close else "") + "one of " + ", ".join(SOURCES)
        raise UsageError(f"--source: unknown source {source!r}", hint=hint)
    return None if source == "all" else (source,)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _cost(value: float) -> str:
    return f"${value:.4f}" if value else "-"


def _listed(flow: FlowSummary) -> dict[str, Any]:
    from mir.traces import UNFINISHED

    listed = flow.model_dump(mode="json")
    listed["status"] = listed["status"] or UNFINISHED
    return listed


def render_flows(flows: list[FlowSummary]) -> None:
    from rich.table import Table

    from mir.traces import UNFINISHED

    if not flows:
        console().print("no flows")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("flow", "agent", "source", "status", "action", "steps", "model"):
        # what identifies a flow stays whole; a long model name is what gets cut
        table.add_column(column, no_wrap=column in ("flow", "agent", "source", "status", "action"))
    for column in ("tokens", "cost"):
        table.add_column(column)
    table.add_column("ms", justify="right")
    table.add_column("updated UTC", no_wrap=True)
    # a terminal shows a 12-character prefix (enough for `traces show`); a pipe, the id
    shown = 12 if console().is_terminal else None
    for flow in flows:
        # every value may come from a trace file or a model: literal, never markup
        table.add_row(
            literal(flow.flow_id[:shown]),
            literal(flow.agent),
            literal(flow.source),
            literal(flow.status or UNFINISHED),
            literal(flow.action),
            str(flow.steps),
            literal(flow.model),
            str(flow.tokens),
            _cost(flow.cost_usd),
            f"{flow.latency_ms:.0f}",
            flow.updated_at.strftime("%m-%d %H:%M:%S"),
        )
    print_listing(table)


def render_flow(events: list[TraceEvent]) -> None:
    from rich.table import Table
    from rich.text import Text

    first = events[0]
    console().print(Text(f"flow {first.flow_id}  agent {first.agent}"))
    table = Table(box=None, pad_edge=False)
    for column in ("seq", "step", "status", "reasons", "provider/model", "prompt"):
        table.add_column(column, no_wrap=column != "reasons")
    for column in ("tokens", "cost", "ms"):
        table.add_column(column, justify="right", no_wrap=True)
    for event in events:
        model = "/".join(part for part in (event.provider, event.model) if part)
        table.add_row(
            str(event.seq),
            literal(event.step),
            literal(event.status),
            literal(", ".join(event.reasons)),
            literal(model),
            literal((event.prompt_hash or "")[:12]),
            f"{event.prompt_tokens}/{event.completion_tokens}",
            _cost(event.cost_usd),
            f"{event.latency_ms:.1f}",
        )
    print_listing(table)
    _print_reviews(events)
    for event in events:
        data = dict(event.data or {})
        prompt = data.pop("prompt", None) if event.step == "infer" else None
        if data:
            console().print(Text(f"\n{event.seq} {event.step}", style="bold"))
            # rich's JSON renderable builds Text itself: string values stay literal
            console().print_json(json.dumps(data, default=str))
        if isinstance(prompt, dict):
            # The rendered prompt as the model read it (redacted when it was stored).
            console().print(Text(f"prompt (template {prompt.get('template')}):", style="bold"))
            console().print(Text(str(prompt.get("text", ""))))


def _print_reviews(events: list[TraceEvent]) -> None:
    """One line per review (who, verdict, signed or not, correction) and the override."""
    from rich.text import Text

    for event in events:
        data = event.data or {}
        if event.step == "review" and "by" in data:
            signed = "signed" if data.get("signature") else "unsigned"
            count = data.get("approvals")
            have = (
                f", {count.get('have')} of {count.get('need')}" if isinstance(count, dict) else ""
            )
            line = f"review: {data.get('verdict')} by {data.get('by')} ({signed}{have})"
            if data.get("correction"):
                line += f", correction {json.dumps(data['correction'], ensure_ascii=False)}"
            console().print(Text(line))
        if event.step == "final" and data.get("human_override"):
            record = data.get("record") or {}
            console().print(
                Text(
                    "human override: executed "
                    f"{json.dumps(record.get('decision'), ensure_ascii=False)} instead of the "
                    f"model's {json.dumps(data.get('proposal'), ensure_ascii=False)}"
                )
            )


def render_reviews(audit: Any) -> None:
    out = console()
    for notice in audit.notes:
        out.print(f"note: {notice}", markup=False, highlight=False)
    for item in audit.findings:
        where = f" (event {item.seq})" if item.seq >= 0 else ""
        out.print(
            f"flow {item.flow_id}{where}: {item.kind}: review by {item.reviewer}: {item.detail}",
            markup=False,
            highlight=False,
        )
    verdict = "ok" if audit.ok else f"{len(audit.findings)} bad review(s)"
    out.print(
        f"reviews: {audit.reviews} checked, {audit.signed} signed: {verdict}",
        markup=False,
        highlight=False,
    )


def render_integrity(report: IntegrityReport, folder: Path) -> None:
    out = console()
    for notice in report.notices:
        out.print(f"note: {notice}", markup=False, highlight=False)
    scope = (
        "every line re-hashed"
        if report.full
        else f"{report.checked} new line(s) re-hashed (--full: all)"
    )
    if report.ok:
        out.print(
            f"ok: {report.lines} line(s) in {report.segments} segment(s) verified, "
            f"{scope}; chain digest {report.digest}",
            markup=False,
            highlight=False,
        )
        return
    for item in report.breaks:
        event = f" (event {item.event_id})" if item.event_id else ""
        # the path, not the bare name: a reader must find the file (relative to the cwd)
        shown = _shown_path(folder / item.segment)
        out.print(f"{shown}:{item.line}: {item.problem}{event}", markup=False)
    out.print(f"TAMPERED: {len(report.breaks)} break(s) in {report.lines} line(s)", markup=False)


def _shown_path(path: Path) -> str:
    here = Path.cwd().resolve()
    full = path.resolve()
    return str(full.relative_to(here)) if full.is_relative_to(here) else str(full)
