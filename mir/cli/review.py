"""``mir review``: the flows waiting for a human (list, expire, remind), what reviewers
taught (export), and the review inbox, a web page reviewers log in to (serve)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.options import AGENT, FORMAT, PROJECT
from mir.cli.options import JSON as AS_JSON
from mir.cli.output import chosen_format, console, print_json, print_rows, say

if TYPE_CHECKING:
    from mir.reviews import PendingPage

# a value JSON has no type for is written as its str()
_print_json = partial(print_json, default=str)


def register(app: typer.Typer) -> None:
    review = typer.Typer(
        help="Flows waiting for a human: list them, close the expired, remind reviewers, "
        "export what reviewers decided.",
        no_args_is_help=True,
    )

    @review.command("list")
    def list_command(
        agent: str | None = AGENT,
        limit: int = typer.Option(50, "--limit", min=1, max=10_000, help="At most this many."),
        offset: int = typer.Option(0, "--offset", min=0, help="Skip this many (oldest first)."),
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Flows waiting for review, oldest first: age, agent, action, the decision's key
        fields, what each waits for. Flows past their TTL are closed as expired first."""
        from mir.reviews import pending_page

        as_json = chosen_format(fmt, as_json) == "json"
        page = pending_page(project, offset=offset, limit=limit, agent=agent)
        if as_json:
            _print_json(page.to_json())
            return
        _say_done(page)
        render_queue(page)

    @review.command("expire")
    def expire_command(
        agent: str | None = AGENT,
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Close every flow waiting past its TTL as expired (traced, never executed)."""
        from mir.reviews import expire_all

        as_json = chosen_format(fmt, as_json) == "json"
        page = expire_all(project, agent=agent)
        if as_json:
            _print_json({"expired": page.expired, "pending": page.total})
            return
        _say_done(page, always=True)
        console().print(f"{page.total} flow(s) still waiting for review")

    @review.command("remind")
    def remind_command(
        agent: str | None = AGENT,
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Remind reviewers of flows still waiting after their contract's
        review.remind_after ([tool.mir.alerts], once per flow and period; `list` and
        `expire` do it too). Flows past their TTL are closed as expired first."""
        from mir.reviews import pending_page

        as_json = chosen_format(fmt, as_json) == "json"
        page = pending_page(project, limit=1, agent=agent)
        if as_json:
            _print_json({"reminded": page.reminded, "expired": page.expired, "notes": page.notes})
            return
        _say_done(page, always=True)
        if not page.reminded:
            console().print("no reminder due")

    @review.command("export")
    def export_command(
        to_eval: bool = typer.Option(
            False,
            "--eval",
            help="Append reviewed flows to the agent's eval suite as cases tagged "
            "from-review (never one whose input and world a case already holds).",
        ),
        suite: Path | None = typer.Option(
            None, "--suite", dir_okay=False, help="The suite file (default: the agent's)."
        ),
        sft: Path | None = typer.Option(
            None,
            "--sft",
            dir_okay=False,
            help="Write chat-format JSONL (rendered prompt, settled decision) to this file.",
        ),
        agent: str | None = AGENT,
        as_json: bool = AS_JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """What reviewers decided, as eval cases (--eval) and fine-tuning data (--sft):
        approvals and corrections are the expected decision, a rejection expects
        another action."""
        from mir.reviews import export_json, export_lines, export_reviews

        as_json = chosen_format(fmt, as_json) == "json"
        report = export_reviews(project, to_eval=to_eval, suite=suite, sft=sft, agent=agent)
        say(*(f"note: {note}" for note in report.notes), err=True)
        if as_json:
            _print_json(export_json(report))
            return
        say(*export_lines(report))

    @review.command("serve")
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
        metrics: bool = typer.Option(
            False, "--metrics", help="Also serve Prometheus metrics at /metrics (no login)."
        ),
        project: Path | None = PROJECT,
    ) -> None:
        """Serve the review inbox: pending flows with their input, context, proposal and
        the rules that fired; approve, reject or correct them with a reason. Reviewers
        log in with the password `mir reviewers password NAME` set."""
        from mir.inbox import serve
        from mir.project import find_project

        serve(find_project(project).root, host=host, port=port, keys_dir=keys, metrics=metrics)

    app.add_typer(review, name="review")


def _say_done(page: PendingPage, *, always: bool = False) -> None:
    """What the read did besides reading, one line each: flows closed as expired,
    reminders sent, alerts that failed (on stderr for a listing; stdout otherwise)."""
    from mir.reviews import page_lines

    for result, line in page_lines(page, always=always):
        say(line, err=not (result and always))


def render_queue(page: PendingPage) -> None:
    from mir.reviews import QUEUE_COLUMNS, more_line, queue_row

    if not page.items:
        console().print("no flow waits for review")
        return
    shown = 12 if console().is_terminal else None
    sep = "\n" if console().is_terminal else ", "  # a pipe keeps one line a flow
    # every value may come from a trace file or a model: literal, never markup
    cells = (queue_row(item, id_width=shown, separator=sep) for item in page.items)
    print_rows(QUEUE_COLUMNS, cells, wrap=("waits for",), fold=("key fields",))
    if (more := more_line(page)) is not None:
        console().print(more)
