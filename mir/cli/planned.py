"""``mir drift``: named in the docs, not built yet.

It exists so that a user who reads about it learns what the command will do and where
its progress is tracked, instead of "No such command". It exits 2 (a usage error:
nothing ran) whatever it is given.
"""

from __future__ import annotations

import typer

_PLANNED = {
    "drift": (
        "watch agents' decisions for drift and suspend an agent past a threshold "
        "(today: `mir agents suspend` by hand)",
        "Watch agents for drift and suspend them (not built yet).",
    ),
}


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
