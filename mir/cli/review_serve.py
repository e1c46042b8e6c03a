"""``mir review serve``: the review inbox, a web page reviewers log in to."""

from __future__ import annotations

from pathlib import Path

import typer

from mir.cli.output import project_option

PROJECT = project_option()


def register(group: typer.Typer) -> None:
    """Add ``serve`` to the ``mir review`` group."""

    @group.command("serve")
    def serve_command(
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
        port: int = typer.Option(8765, "--port", help="TCP port to listen on."),
        keys: Path | None = typer.Option(
            None,
            "--keys",
            file_okay=False,
            help="Folder of reviewers' private keys (NAME.key): a reviewer's approvals "
            "from the page are signed with NAME.key, else unsigned.",
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Serve the review inbox: pending flows with their input, context, proposal and
        the rules that fired; approve, reject or correct them with a reason. Reviewers
        log in with the password `mir reviewers password NAME` set."""
        from mir.inbox import serve
        from mir.project import find_project

        root = find_project(project).root
        serve(root, host=host, port=port, keys_dir=keys)
