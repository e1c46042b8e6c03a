"""Commands that take any number of one argument (``mir drift [AGENT]...``), and groups
whose first argument may be one (``default_group``).

typer 0.29 prints a variadic argument's type in ``--help`` as ``<list[str]>``, whatever
its metavar, and no per-argument setting changes that. ``VariadicCommand`` (pass it as
``cls=``) lists such an argument as its metavar and ``...`` instead, as the usage line
already writes it: ``AGENT...  Agents (capability.agent, or the name alone) ...``.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup


class VariadicCommand(TyperCommand):
    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                if param.nargs == -1:
                    name = param.metavar or (param.name or "").upper()
                    record = (f"{name}...", record[1])
                arguments.append(record)
            elif param.param_type_name == "option":
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def default_group(command: str) -> type[TyperGroup]:
    """A group that runs ``command`` unless its first argument names another of its
    commands or asks for help: ``mir drift [AGENT ...]`` is ``mir drift show ...``, and
    ``mir eval [TARGETS] [OPTIONS]`` is ``mir eval run ...``."""

    class DefaultGroup(TyperGroup):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
                args = [command, *args]
            return super().parse_args(ctx, args)

    return DefaultGroup
