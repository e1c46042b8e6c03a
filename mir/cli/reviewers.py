"""``mir reviewers``: the project's declared reviewers, their keys and web logins."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from mir.cli.options import FORMAT, JSON, PROJECT
from mir.cli.output import add_row, chosen_format, console, print_listing, say


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Declared reviewers (reviewers.toml): keys, roles, web logins.",
        no_args_is_help=True,
    )

    @group.command("keygen")
    def keygen_command(
        name: str = typer.Argument(help="The reviewer the key is for."),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="Where to write the private key (default: ~/.config/mir/keys/NAME.key); "
            "never inside the project's state folder.",
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Make an Ed25519 key pair: the private key goes to a 0600 file, the public key
        is printed for reviewers.toml."""
        from mir.reviewers import key_lines, make_key

        key = make_key(name, out=out, project=project)
        say(*key_lines(name, key), err=True)
        console().out(key.public_key, highlight=False)

    @group.command("add")
    def add_command(
        name: str = typer.Argument(help="The reviewer's name."),
        roles: list[str] = typer.Option(
            [],
            "--role",
            metavar="ROLE",
            help="A role (repeat for several), as actions' approvals.roles name.",
        ),
        public_key: str = typer.Option(
            ..., "--public-key", help="ed25519:<base64>, as `mir reviewers keygen` prints."
        ),
        replace: bool = typer.Option(
            False, "--replace", help="Replace a reviewer already declared under that name."
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Declare a reviewer in reviewers.toml (never replaces one without --replace)."""
        from mir.reviewers import declare, declared_line

        done = declare(name, roles=roles, public_key=public_key, replace=replace, project=project)
        say(declared_line(name, done))

    @group.command("list")
    def list_command(
        as_json: bool = JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """The declared reviewers: name, roles, key fingerprint, whether a web login is set."""
        from rich.table import Table

        from mir.reviewers import ROSTER_COLUMNS, roster_cells, roster_rows

        shown = chosen_format(fmt, as_json, ("table", "json"))
        rows = roster_rows(project)
        if shown == "json":
            console().print_json(json.dumps({"reviewers": rows}))
            return
        if not rows:
            console().print("no reviewers declared (add one with `mir reviewers add`)")
            return
        table = Table(*ROSTER_COLUMNS)
        for row in rows:
            add_row(table, *roster_cells(row))
        print_listing(table)

    @group.command("password")
    def password_command(
        name: str = typer.Argument(help="A declared reviewer."),
        stdin: bool = typer.Option(
            False, "--password-stdin", help="Read the password from stdin (first line)."
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Set a reviewer's web-inbox login (stored as a scrypt hash, never in clear)."""
        from mir.reviewers import set_login

        set_login(name, password=lambda: _password(name, stdin), project=project)
        say(f"web login set for {name}")

    app.add_typer(group, name="reviewers")


def _password(name: str, stdin: bool) -> str:
    import getpass

    from mir.errors import UsageError

    if stdin:
        return sys.stdin.readline().rstrip("\r\n")
    password = getpass.getpass(f"password for {name}: ")
    if getpass.getpass("again: ") != password:
        raise UsageError("the two passwords differ")
    return password
