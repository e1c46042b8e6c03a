"""Commands named in the docs and the scaffolded files before they are built.

None at the moment (`mir eval` and `mir drift` are built). A planned command exists so
that a user who reads about it learns what it will do and where its progress is tracked,
instead of "No such command"; it exits 2 (a usage error: nothing ran) whatever it is given.
"""

from __future__ import annotations

import typer

# name -> (what it will do, its one-line summary)
_PLANNED: dict[str, tuple[str, str]] = {}


def register(app: typer.Typer) -> None:
    for name, (will, summary) in _PLANNED.items():
        app.command(
            name,
            help=f"{summary} It will {will}.",
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        )(_placeholder(name, will))


def _placeholder(name: str, will: str):
    def command(ctx: typer.Context) -> None:
        from mir.errors import UsageError

        raise UsageError(
            f"`mir {name}` is not built yet: it will {will}",
            hint="the README's Status table tracks it",
        )

    command.__name__ = f"{name}_command"
    return command
