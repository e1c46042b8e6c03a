"""``mir agents list|suspend|resume``: see agents and switch them off and on."""

from __future__ import annotations

import typer

from mir.cli.options import AGENT_HELP, FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, console, note, print_models, print_rows, say_parts


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
        from mir.runtime import agent_cells, agent_columns, broken_line, listed_agents

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
        # names, reasons and paths are written by users: literal, never markup
        cells = (agent_cells(status, terminal=terminal) for status in statuses)
        # the name stays whole; a long contract path wraps (folds) instead of ending in
        # `…`, which made agents/triage.yaml and agents/triage2.yaml look the same
        print_rows(agent_columns(terminal), cells, wrap=("reason", "by"), fold=("contract",))
        if broken:
            note(broken)
            raise typer.Exit(1)

    @agents.command("suspend")
    def suspend_command(
        name: str = typer.Argument(help=AGENT_HELP),
        reason: str | None = typer.Option(None, "--reason", help="Why (recorded)."),
        project: str | None = PROJECT,
    ) -> None:
        """Refuse the agent's model decisions; its contract's rules decide until resumed."""
        from mir.runtime import answer_parts, suspend_agent

        status = suspend_agent(name, project=project, reason=reason)
        say_parts(*answer_parts(status))

    @agents.command("resume")
    def resume_command(
        name: str = typer.Argument(help=AGENT_HELP),
        project: str | None = PROJECT,
    ) -> None:
        """Let the agent's model decide again."""
        from mir.runtime import answer_parts, resume_agent

        status = resume_agent(name, project=project)
        say_parts(*answer_parts(status))

    app.add_typer(agents, name="agents")
