"""``mir agents list|suspend|resume``: see agents and switch them off and on."""

from __future__ import annotations

import typer

from mir.cli.output import console

PROJECT = typer.Option(None, "--project", help="Project folder (default: found from the cwd).")


def register(app: typer.Typer) -> None:
    agents = typer.Typer(help="List, suspend and resume agents.", no_args_is_help=True)

    @agents.command("list")
    def list_command(project: str | None = PROJECT) -> None:
        """Every agent of the project with its state (active / suspended)."""
        from rich.table import Table

        from mir.runtime import list_agents

        table = Table("agent", "state", "contract", "reason", "by", "at", box=None)
        for status in list_agents(project):
            style = "red" if status.state == "suspended" else "green"
            table.add_row(
                status.name,
                f"[{style}]{status.state}[/]",
                status.contract or "-",
                status.reason or "-",
                status.by or "-",
                status.at or "-",
            )
        console().print(table)

    @agents.command("suspend")
    def suspend_command(
        name: str = typer.Argument(help="capability.agent"),
        reason: str | None = typer.Option(None, "--reason", help="Why (recorded)."),
        project: str | None = PROJECT,
    ) -> None:
        """Refuse the agent's model decisions; its contract's rules decide until resumed."""
        from mir.runtime import suspend_agent

        status = suspend_agent(name, project=project, reason=reason)
        console().print(f"{status.name}: [red]suspended[/] by {status.by}")

    @agents.command("resume")
    def resume_command(
        name: str = typer.Argument(help="capability.agent"),
        project: str | None = PROJECT,
    ) -> None:
        """Let the agent's model decide again."""
        from mir.runtime import resume_agent

        status = resume_agent(name, project=project)
        console().print(f"{status.name}: [green]active[/] (resumed by {status.by})")

    app.add_typer(agents, name="agents")
