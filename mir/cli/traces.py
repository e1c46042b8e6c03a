"""``mir traces``: list, show, compact, export and verify decision traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.options import AGENT, FLOWS_SINCE, FORMAT, PROJECT
from mir.cli.options import JSON as AS_JSON
from mir.cli.output import (
    chosen_format,
    console,
    json_option,
    note,
    print_json,
    print_models,
    print_rows,
    say,
)

if TYPE_CHECKING:
    from mir.traces import FlowSummary, TraceEvent

EXPORT_FORMATS = ("json", "parquet", "otlp")


def register(app: typer.Typer) -> None:
    traces = typer.Typer(help="Inspect, export and verify decision traces.", no_args_is_help=True)

    @traces.command("list")
    def list_command(
        agent: str | None = AGENT,
        status: str | None = typer.Option(
            None,
            "--status",
            help="Only flows whose current status is this (e.g. executed; unfinished: no "
            "final event yet, still running or its process stopped).",
        ),
        since: str | None = FLOWS_SINCE,
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
        from mir.traces import list_traces, listed_json

        as_json = chosen_format(fmt, as_json) == "json"
        flows = list_traces(
            project, warn=note, agent=agent, status=status, since=since, limit=limit, source=source
        )
        if as_json:
            print_json([listed_json(flow) for flow in flows])
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
        from mir.traces import flow_events

        as_json = chosen_format(fmt, as_json) == "json"
        events = flow_events(project, flow_id, warn=note)
        if as_json:
            print_models(events)
        else:
            render_flow(events)

    @traces.command("compact")
    def compact_command(project: Path | None = PROJECT) -> None:
        """Fold closed segment files into the DuckDB file (also happens automatically)."""
        from mir.traces import compact_traces, compaction_line

        result, db_path = compact_traces(project, warn=note)  # unreadable lines: warned
        say(compaction_line(result, db_path))  # the path is literal, never markup

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
        since: str | None = FLOWS_SINCE,
        source: str = typer.Option(
            "all",
            "--source",
            help="Only flows of this source: production, replay, eval, shadow, or all (default).",
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Events, for other tools: JSON lines, Parquet, or OTLP spans (GenAI semconv).
        Filters keep whole flows."""
        from mir.traces import export_flows

        fmt = chosen_format(fmt, as_json, EXPORT_FORMATS)
        count = export_flows(
            project, fmt, output, warn=note, agent=agent, since=since, source=source
        )
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
        from mir.audit import verify_project

        verified = verify_project(project, full=full, warn=note)
        for line in verified.lines:
            console().print(line, markup=False, highlight=False)
        if not verified.ok:
            raise typer.Exit(1)

    app.add_typer(traces, name="traces")


def render_flows(flows: list[FlowSummary]) -> None:
    from mir.traces import FLOW_COLUMNS, flow_cells

    if not flows:
        console().print("no flows")
        return
    # what identifies a flow stays whole; a long model name is what gets cut
    # a terminal shows a 12-character prefix (enough for `traces show`); a pipe, the id
    shown = 12 if console().is_terminal else None
    # every value may come from a trace file or a model: literal, never markup
    cells = (flow_cells(flow, shown) for flow in flows)
    every = (*FLOW_COLUMNS, "cost", "ms", "updated UTC")
    print_rows(every, cells, wrap=(*FLOW_COLUMNS[5:], "cost", "ms"), right=("ms",))


def render_flow(events: list[TraceEvent]) -> None:
    from rich.text import Text

    from mir.traces import (
        EVENT_COLUMNS,
        event_cells,
        event_details,
        flow_heading,
        flow_review_lines,
    )

    console().print(Text(flow_heading(events)))
    numbers = ("tokens", "cost", "ms")
    print_rows(
        (*EVENT_COLUMNS, *numbers), map(event_cells, events), wrap=("reasons",), right=numbers
    )
    for line in flow_review_lines(events):
        console().print(Text(line))
    for event in events:
        data, prompt = event_details(event)
        if data:
            console().print(Text(f"\n{event.seq} {event.step}", style="bold"))
            # rich's JSON renderable builds Text itself: string values stay literal
            console().print_json(json.dumps(data, default=str))
        if isinstance(prompt, dict):
            # The rendered prompt as the model read it (redacted when it was stored).
            console().print(Text(f"prompt (template {prompt.get('template')}):", style="bold"))
            console().print(Text(str(prompt.get("text", ""))))
