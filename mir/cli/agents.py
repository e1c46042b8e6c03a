"""``mir agents list|suspend|resume``: see agents and switch them off and on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

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
    from rich.text import Text

    from mir.runtime import AgentStatus

PROJECT = project_option()
_NAME_HELP = "capability.agent, or the agent name alone when only one capability has it."
_STATE_STYLE = {"active": "green", "suspended": "red", "broken": "bold red"}


def _when(at: str | None) -> str | None:
    """``2026-11-30 19:42`` on a terminal (the full ISO time is in a pipe and ``--json``)."""
    from datetime import UTC, datetime

    try:
        return datetime.fromisoformat(at).astimezone(UTC).strftime("%Y-%m-%d %H:%M") if at else at
    except ValueError:
        return at


def _answer(status: AgentStatus, changed: Text) -> None:
    """``NAME: suspended (by alice)`` for a change; for none, suspend and resume answer
    alike: ``NAME: already STATE (...; nothing changed)``, exit 0 both."""
    from rich.text import Text

    if status.changed:
        console().print(Text.assemble(f"{status.name}: ", changed))
        return
    if status.state == "suspended":
        since = f"suspended by {status.by or '?'} at {_when(status.at) or '?'} UTC"
    elif status.at:
        since = f"resumed by {status.by or '?'} at {_when(status.at)} UTC"
    else:
        since = "it was not suspended"
    console().print(Text(f"{status.name}: already {status.state} ({since}; nothing changed)"))


def register(app: typer.Typer) -> None:
    agents = typer.Typer(help="List, suspend and resume agents.", no_args_is_help=True)

    @agents.command("list")
    def list_command(
        as_json: bool = json_option(),
        fmt: str | None = format_option(),
        project: str | None = PROJECT,
    ) -> None:
        """Every agent of the project with its state (active / suspended / broken); exit 1
        when a contract is broken."""
        from rich.table import Table

        from mir.project import find_project
        from mir.runtime import list_agents

        as_json = chosen_format(fmt, as_json) == "json"
        listing = list_agents(project)
        broken = [status.name for status in listing if status.state == "broken"]
        if as_json:
            rows = [status.model_dump(mode="json") for status in listing]
            sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
            raise typer.Exit(1 if broken else 0)
        if not listing:
            folder = find_project(Path(project) if project else None).settings.capabilities
            console().print(f"no agents found under {folder}/", markup=False)
            return
        table = Table(box=None, pad_edge=False)
        # the name stays whole; a long contract path wraps (folds) instead of ending in
        # `…`, which made agents/triage.yaml and agents/triage2.yaml look the same
        table.add_column("agent", no_wrap=True)
        table.add_column("state", no_wrap=True)
        table.add_column("contract", overflow="fold")
        table.add_column("reason")
        table.add_column("by")
        table.add_column("at UTC" if console().is_terminal else "at", no_wrap=True)
        for status in listing:
            # names, reasons and paths are written by users: literal, never markup
            table.add_row(
                literal(status.name),
                literal(status.state, style=_STATE_STYLE.get(status.state, "")),
                literal(status.contract),
                literal(status.error or status.reason),
                literal(status.by),
                literal(_when(status.at) if console().is_terminal else status.at),
            )
        print_listing(table)
        if broken:
            # a broken contract decides nothing until fixed: a script checking the
            # listing must not read it as healthy
            count = f"{len(broken)} broken agent{'s' if len(broken) > 1 else ''}"
            error_console().print(
                f"{count}: {', '.join(broken)} (its contract does not load: the row says why)",
                markup=False,
            )
            raise typer.Exit(1)

    @agents.command("suspend")
    def suspend_command(
        name: str = typer.Argument(help=_NAME_HELP),
        reason: str | None = typer.Option(None, "--reason", help="Why (recorded)."),
        project: str | None = PROJECT,
    ) -> None:
        """Refuse the agent's model decisions; its contract's rules decide until resumed."""
        from rich.text import Text

        from mir.runtime import suspend_agent

        status = suspend_agent(name, project=project, reason=reason)
        _answer(status, Text.assemble(("suspended", "red"), f" (by {status.by})"))

    @agents.command("resume")
    def resume_command(
        name: str = typer.Argument(help=_NAME_HELP),
        project: str | None = PROJECT,
    ) -> None:
        """Let the agent's model decide again."""
        from rich.text import Text

        from mir.runtime import resume_agent

        status = resume_agent(name, project=project)
        _answer(status, Text.assemble(("active", "green"), f" (resumed by {status.by})"))

    app.add_typer(agents, name="agents")
