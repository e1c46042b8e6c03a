"""Consoles shared by the command modules (created on demand, never at import time), and
the printing they share: literal lines (``say``), JSON (``print_json``).

``rich.console`` is imported inside the functions: it costs ~18 ms, and ``mir --version``
or ``mir --help`` should not pay for a console they never print to.

Two rules for everything printed through them:

* Text that mir did not write itself (model output, decision reasons, user input, file
  and agent names, trace contents) is printed literally: wrapped in ``rich.text.Text``
  (see ``literal``) or printed with ``markup=False``, never inside a markup string. A
  reason of ``[/bold] x`` must not raise after a refund was paid, and
  ``[blink red]PAID[/]`` must show as stored.
* A listing piped to another program (no terminal) is never cut to 80 columns:
  ``print_listing`` renders it as wide as its values.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

# Wide enough for any value a listing holds; rich pads a table only to its content.
PIPED_WIDTH = 100_000


@cache
def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def literal(value: Any, style: str = "") -> Text:
    """``value`` as text that rich never parses for markup (``None`` shows as ``-``)."""
    from rich.text import Text

    return Text("-" if value is None or value == "" else str(value), style=style)


def listing(
    *columns: str,
    wrap: Collection[str] = (),
    right: Collection[str] = (),
    fold: Collection[str] = (),
) -> Table:
    """A listing's table (no box, no edge padding): a column stays whole unless named in
    ``wrap`` or ``fold`` (``fold``: a word too long for it folds onto the next line, never
    cut with "…"); those in ``right`` are right-justified."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name in columns:
        table.add_column(
            name,
            no_wrap=name not in wrap and name not in fold,
            justify="right" if name in right else "left",
            overflow="fold" if name in fold else "ellipsis",
        )
    return table


def add_row(table: Table, *cells: Any) -> None:
    """A row of literal cells: each a value, or a ``(value, style)`` pair."""
    table.add_row(*(literal(*c) if isinstance(c, tuple) else literal(c) for c in cells))


def print_rows(
    columns: Iterable[str],
    rows: Iterable[Iterable[Any]],
    *,
    wrap: Collection[str] = (),
    right: Collection[str] = (),
    fold: Collection[str] = (),
) -> None:
    """A ``listing`` of ``columns`` holding ``rows`` (each row's cells as ``add_row``
    takes them), printed by ``print_listing``."""
    table = listing(*columns, wrap=wrap, right=right, fold=fold)
    for cells in rows:
        add_row(table, *cells)
    print_listing(table)


def print_listing(renderable: RenderableType) -> None:
    """A table on stdout: fitted to the terminal, or as wide as its values when piped."""
    out = console()
    if out.is_terminal:
        out.print(renderable)
    else:
        # rich pads every cell to its column's width: a pipe (grep, cut, diff) would get
        # trailing spaces on every line
        piped = _piped_console()
        with piped.capture() as captured:
            piped.print(renderable, crop=False)
        lines = captured.get().splitlines()
        out.file.write("".join(line.rstrip() + "\n" for line in lines))


@cache
def _piped_console() -> Console:
    # rich caps a print's width at the console's, so a wide listing needs its own console
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, width=PIPED_WIDTH)


@contextmanager
def step_spinner(*, enabled: bool = True) -> Iterator[Callable[[str], None] | None]:
    """A spinner on stderr naming the current step, only when stderr is a terminal.

    Yields the callback to hand to the runtime (``None`` when there is no spinner: piped,
    ``--json``, or not a terminal, so nothing but the result is ever written). It is
    transient: the line is gone when the step ends, before the result is printed.
    """
    err = error_console()
    if not enabled or not err.is_terminal:
        yield None
        return
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.text import Text

    spinner = Spinner("dots", text=Text("loading agent"))
    with Live(spinner, console=err, transient=True, refresh_per_second=12.5) as live:

        def show(step: str) -> None:
            spinner.update(text=Text(step))  # the step may name a model: literal text
            live.refresh()  # draw it now: a step can end before the next tick

        yield show


# `--json` and `--format json` mean the same thing in every command that prints JSON:
# users carry one from a command that has it to one that has the other.
JSON_HELP = "Print JSON (the same as --format json)."


def json_option(help: str = JSON_HELP) -> Any:
    """The ``--json`` flag (a ``typer.Option``); pair it with ``format_option``."""
    import typer

    return typer.Option(False, "--json", help=help)


def format_option(formats: tuple[str, ...] = ("table", "json"), short: bool = False) -> Any:
    """``--format`` (default: the first of ``formats``), for ``chosen_format``."""
    import typer

    names = ("--format", "-f") if short else ("--format",)
    listed = f"{', '.join(formats[:-1])} or {formats[-1]}" if len(formats) > 1 else formats[0]
    return typer.Option(
        None,
        *names,
        metavar="FORMAT",
        help=f"{listed} (default {formats[0]}; --json is the same as --format json).",
    )


def chosen_format(
    fmt: str | None, as_json: bool, formats: tuple[str, ...] = ("table", "json")
) -> str:
    """The output format ``--format`` and ``--json`` ask for (they must agree)."""
    from mir.errors import UsageError

    if fmt is not None and fmt not in formats:
        raise UsageError(f"unknown --format {fmt!r}", hint=f"use one of {', '.join(formats)}")
    if as_json and fmt not in (None, "json"):
        raise UsageError(f"--json and --format {fmt} disagree", hint="give one of them")
    return "json" if as_json else fmt or formats[0]


def say(*lines: Any, err: bool = False) -> None:
    """Each line literally (``literal``: never markup), on stdout or with ``err`` stderr."""
    out = error_console() if err else console()
    for line in lines:
        out.print(literal(line))


def print_error(exc: Exception) -> None:
    """``error: ...`` on stderr, a line for each line of the message (a contract with two
    typos: two lines, each marked as an error). The message is literal: it quotes things
    like "[tool.mir]" or the user's own input, which rich would eat as markup."""
    from rich.text import Text

    for line in str(exc).splitlines() or [""]:
        error_console().print(Text.assemble(("error:", "bold red"), " ", line))


def note(line: str) -> None:
    """A line on stderr exactly as written (never markup): warnings, progress, notes."""
    error_console().print(line, markup=False, highlight=False)


def say_parts(*parts: str | tuple[str, str]) -> None:
    """One line on stdout of parts, each text or ``(text, style)``, literally (no markup)."""
    from rich.text import Text

    console().print(Text.assemble(*parts))


def print_json(
    value: Any, *, ascii: bool = False, default: Callable[[Any], Any] | None = None
) -> None:
    """``value`` as indented JSON on stdout, never cut or highlighted (``ascii``: non-ASCII
    characters escaped; ``default``: how values JSON has no type for are written)."""
    import json
    import sys

    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=ascii, default=default) + "\n")


def print_models(models: Iterable[Any], *, ascii: bool = False, **dump: Any) -> None:
    """A list of pydantic models as JSON (each ``model_dump(mode="json", **dump)``)."""
    print_json([model.model_dump(mode="json", **dump) for model in models], ascii=ascii)
