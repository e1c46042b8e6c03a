"""Options that several command modules take alike, declared once so that their names
and help read the same in every command."""

from __future__ import annotations

import typer

from mir.cli.output import format_option, json_option

PROJECT = typer.Option(
    None, "--project", file_okay=False, help="Project folder (default: found from the cwd)."
)
FORMAT = format_option()
JSON = json_option()
AGENT_HELP = "capability.agent, or the agent name alone when only one capability has it."
AGENT = typer.Option(None, "--agent", help=f"Only this agent's flows: {AGENT_HELP}")
FLOWS_SINCE = typer.Option(
    None, "--since", help="Only flows active since: ISO time, or 30m, 1h, 2d."
)
METRICS = typer.Option(
    None,
    "--metrics",
    metavar="[HOST:]PORT",
    help="Serve Prometheus metrics at http://HOST:PORT/metrics (host 127.0.0.1 by default).",
)
