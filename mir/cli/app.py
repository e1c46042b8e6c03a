"""The ``mir`` command: a thin typer shell over the capabilities' application functions.

Every sub-command module registers itself in ``build_app``. Sub-command modules import
only typer/rich and light application code at module level; anything heavy (duckdb,
llama_cpp, litellm) is imported inside the call that needs it, so ``mir --help`` stays
as fast as ``import typer, rich``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from mir import __version__
from mir.cli.output import error_console, note, print_error
from mir.errors import EXIT_USAGE, MirUserError

if TYPE_CHECKING:
    import typer


def _version(value: bool) -> None:
    import typer

    if value:
        typer.echo(f"mir {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    import typer

    from mir.cli import (
        doctor,
        drift,
        eval,
        lint,
        mcp,
        models,
        new,
        review,
        reviewers,
        run,
        schema,
        traces,
    )

    app = typer.Typer(
        name="mir",
        help="Machine Intelligence Runtime: capability-first scaffolding, boundary linting, "
        "and agents whose every output is a validated, traced proposal.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain click help: typer's rich help imports rich.markdown, markdown_it and
        # rich.traceback (~50 ms), which would make `mir --help` ~2.5x `import typer, rich`.
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    ) -> None:
        """mir keeps the model a cognitive engine, never an unchecked decision-maker."""

    modules = (new, lint, run, review, reviewers, traces, eval, drift, models, schema, mcp, doctor)
    for module in modules:
        module.register(app)
    return app


INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the process exit code."""
    args = _global_debug_first(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    import typer

    try:  # typer >= 0.29 vendors click; older typers use the click package itself
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click.exceptions import ClickException

    app = build_app()
    try:
        result = app(args=args, prog_name="mir", standalone_mode=False)
    except MirUserError as exc:
        if debug:
            raise
        _fit_hint_to_command(exc, app, args)
        print_error(exc)
        return exc.exit_code
    except typer.Abort:
        error_console().print("aborted")
        return 1
    except ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        result = INTERRUPTED
    code = result if isinstance(result, int) else 0
    if code == INTERRUPTED:
        # typer turns Ctrl-C into a silent 130, which looked like a crash or a finished
        # run; no command returns 130 itself. 130 (128 + SIGINT) is what shells expect.
        note("interrupted")
    return code


def _fit_hint_to_command(exc: MirUserError, app: typer.Typer, args: list[str]) -> None:
    """Run from the wrong folder, a command with ``--project`` says so; one without it
    is never told to pass one."""
    if not getattr(exc, "from_cwd", False):
        return
    from typer.main import get_command

    command = get_command(app)
    for token in args:
        sub = getattr(command, "commands", {}).get(token)
        if sub is None:
            if token.startswith("-"):
                continue  # --debug, before the command's name
            break
        command = sub
    if any("--project" in getattr(param, "opts", ()) for param in command.params):
        exc.hint = exc.OPTION_HINT


def _global_debug_first(args: list[str]) -> list[str]:
    """``--debug`` anywhere before ``--`` is the global flag: the README says "``--debug``
    shows the traceback" and users add it at the end (``mir lint boundaries --debug``),
    which click would refuse as an option of the subcommand."""
    cut = args.index("--") if "--" in args else len(args)
    head = [arg for arg in args[:cut] if arg != "--debug"]
    if len(head) == cut:
        return args
    return ["--debug", *head, *args[cut:]]


def run_main() -> None:  # pragma: no cover - thin wrapper for the console script
    # typer is imported only when needed: a plain `mir lint boundaries` runs without it
    # (a warm one is answered from its cache in a fraction of typer's start-up)
    from mir.cli.lint_direct import direct_command

    code = direct_command(sys.argv[1:])
    sys.exit(main() if code is None else code)


__all__ = ["EXIT_USAGE", "build_app", "main"]
