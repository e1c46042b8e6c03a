"""``mir eval``: named in the docs and the scaffolded files, not built yet.

They exist so that a user who follows the scaffolded eval suite ("Run with `mir eval`")
learns what the command will do and where its progress is tracked, instead of
"No such command". It exits 2 (a usage error: nothing ran) whatever they are given.
"""

from __future__ import annotations

import typer

_PLANNED = {
    "eval": (
        "run an agent's eval suites (evals/*.yaml) through the runtime and exit 1 on a "
        "regression, to gate CI",
        "Run eval suites against agents (not built yet).",
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
