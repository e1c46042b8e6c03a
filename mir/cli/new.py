"""``mir init``, ``mir new capability`` / ``mir new agent``: make a folder a mir project
(safe to re-run) and scaffold code that follows the architecture."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from mir.scaffold import Plan

DRY_RUN = typer.Option(False, "--dry-run", help="Print the files it would write; write nothing.")
TEMPLATES = typer.Option(
    None,
    "--templates",
    help="Folder of jinja2 templates overriding mir's, file by file (a missing one falls "
    "back to mir's). Default: the 'templates' setting of tool.mir in pyproject.toml.",
    file_okay=False,
    metavar="DIR",
)


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_command(
        folder: Path = typer.Argument(
            Path("."), help="Project folder (created if missing).", file_okay=False
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Print what it would change; write nothing."
        ),
    ) -> None:
        """Make a folder a mir project: intent docs, tool.mir settings, capabilities/.

        Writes CLAUDE.md, AGENTS.md, pyproject.toml (or adds the tool.mir table to yours),
        capabilities/__init__.py, and .mir/ to .gitignore. Existing files are left as
        they are; re-running changes nothing.
        """
        from mir.scaffold import init_project

        render_plan(init_project(folder, dry_run=dry_run), dry_run)

    new = typer.Typer(
        help="Scaffold a capability or an agent (never overwrites a file).",
        no_args_is_help=True,
    )

    @new.command("capability")
    def capability_command(
        name: str = typer.Argument(help="Capability name, e.g. support_desk (or support-desk)."),
        dry_run: bool = DRY_RUN,
        templates: Path | None = TEMPLATES,
    ) -> None:
        """A vertical slice: intent doc, public interface, domain/application/adapters, tests."""
        from mir.scaffold import new_capability

        render_plan(new_capability(name, templates=templates, dry_run=dry_run), dry_run)

    @new.command("agent")
    def agent_command(
        capability: str = typer.Argument(help="An existing capability."),
        name: str = typer.Argument(help="Agent name, e.g. triage."),
        actions: list[str] | None = typer.Option(
            None,
            "--action",
            "-a",
            metavar="NAME",
            help="An action the agent may choose (repeat it). Default: resolve. "
            "'escalate' (hand to a human, the fallback) is always added.",
        ),
        dry_run: bool = DRY_RUN,
        templates: Path | None = TEMPLATES,
    ) -> None:
        """A responsibility contract, prompt, decision schema, executors and eval suite."""
        from mir.scaffold import DEFAULT_ACTIONS, new_agent

        plan = new_agent(
            capability,
            name,
            actions=actions or DEFAULT_ACTIONS,
            templates=templates,
            dry_run=dry_run,
        )
        render_plan(plan, dry_run)

    app.add_typer(new, name="new")


def render_plan(plan: Plan, dry_run: bool) -> None:
    """The plan as a file tree, each file marked with what happens to it."""
    from rich.text import Text
    from rich.tree import Tree

    from mir.cli.output import console
    from mir.scaffold import plan_nodes, plan_summary

    heading = f"{plan.title} (dry run: nothing written)" if dry_run else plan.title
    tree = Tree(Text(heading))
    drawn: dict[tuple[str, ...], Tree] = {(): tree}
    for parent, node, label in plan_nodes(plan, dry_run=dry_run):
        drawn[node] = drawn[parent].add(Text(label))
    console().print(tree, soft_wrap=False, crop=False)
    console().print(plan_summary(plan, dry_run=dry_run))
