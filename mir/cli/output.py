"""Consoles shared by the command modules (created on demand, never at import time).

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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
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
