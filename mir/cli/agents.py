"""``mir agents list|suspend|resume``: see agents and switch them off and on."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mir.cli.options import AGENT_HELP, FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, console, error_console, print_models, print_rows

if TYPE_CHECKING:
    from rich.text import Text

    from mir.runtime import AgentStatus


def _answer(status: AgentStatus, changed: Text) -> None:
    """``NAME: suspended (by alice)`` for a change; for none, suspend and resume answer
    alike (``mir.runtime.unchanged_line``)."""
    from rich.text import Text

    from mir.runtime import unchanged_line

    if status.changed:
        console().print(Text.assemble(f"{status.name}: ", changed))
    else:
        console().print(Text(unchanged_line(status)))


def register(app: typer.Typer) -> None:
    agents = typer.Typer(help="List, suspend and resume agents.", no_args_is_help=True)

    @agents.command("list")
    def list_command(
        as_json: bool = JSON,
        fmt: str | None = FORMAT,
        project: str | None = PROJECT,
    ) -> None:
        """Every agent of the project with its state (active / suspended / broken); exit 1
        when a contract is broken."""
        from mir.runtime import AGENT_COLUMNS, agent_cells, broken_line, listed_agents

        as_json = chosen_format(fmt, as_json) == "json"
        statuses, folder = listed_agents(project)
        broken = broken_line(statuses)
        if as_json:
            print_models(statuses)
            raise typer.Exit(1 if broken else 0)
        if not statuses:
            console().print(f"no agents found under {folder}/", markup=False)
            return
        terminal = console().is_terminal
        at = "at UTC" if terminal else "at"
        # names, reasons and paths are written by users: literal, never markup
        cells = (agent_cells(status, terminal=terminal) for status in statuses)
        # the name stays whole; a long contract path wraps (folds) instead of ending in
        # `…`, which made agents/triage.yaml and agents/triage2.yaml look the same
        print_rows((*AGENT_COLUMNS, at), cells, wrap=("reason", "by"), fold=("contract",))
        if broken:
            error_console().print(broken, markup=False)
            raise typer.Exit(1)

    @agents.command("suspend")
    def suspend_command(
        name: str = typer.Argument(help=AGENT_HELP),
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
        name: str = typer.Argument(help=AGENT_HELP),
        project: str | None = PROJECT,
    ) -> None:
        """Let the agent's model decide again."""
        from rich.text import Text

        from mir.runtime import resume_agent

        status = resume_agent(name, project=project)
        _answer(status, Text.assemble(("active", "green"), f" (resumed by {status.by})"))

    app.add_typer(agents, name="agents")
