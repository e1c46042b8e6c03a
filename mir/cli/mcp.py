"""``mir mcp serve``: the project's agents as the tools of an MCP server."""

from __future__ import annotations

import typer

from mir.cli.options import PROJECT
from mir.cli.output import note


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Serve the project's agents to MCP clients.", no_args_is_help=True)

    @group.command("serve")
    def serve_command(
        http: str | None = typer.Option(
            None, "--http", metavar="HOST:PORT", help="Streamable HTTP at /mcp (default: stdio)."
        ),
        provider: str | None = typer.Option(
            None, "--provider", help="Override routes: llama, litellm, scripted or rules."
        ),
        responses: str | None = typer.Option(
            None, "--responses", help="JSONL of raw model outputs (for --provider scripted)."
        ),
        project: str | None = PROJECT,
    ) -> None:
        """Each agent one tool (its contract's input schema in, the decision record out),
        plus flow_status; the idempotency_key argument decides a retried call once."""
        from mir.mcp_server import serve_agents

        serve_agents(project, http=http, provider=provider, responses=responses, say=note)

    app.add_typer(group, name="mcp")
