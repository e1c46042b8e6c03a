"""``mir review``: the flows waiting for a human (list, expire, remind) and what
reviewers taught (export)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mir.cli import review_serve
from mir.cli.output import (
    chosen_format,
    console,
    error_console,
    format_option,
    json_option,
    literal,
    print_listing,
    project_option,
)

if TYPE_CHECKING:
    from mir.reviews import PendingPage

PROJECT = project_option()
EXPIRE_BATCH = 1_000  # flows `mir review expire` closes per read of the queue
AS_JSON = json_option()
FORMAT = format_option()
AGENT = typer.Option(
    None,
    "--agent",
    help="Only this agent's flows: capability.agent, or the agent name alone when only one "
    "capability has it.",
)


def build_group() -> typer.Typer:
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
        from mir.reviews import pending_page

        as_json = chosen_format(fmt, as_json) == "json"
        page = pending_page(project, limit=1, agent=agent, expire_at_most=EXPIRE_BATCH)
        expired = list(page.expired)
        while page.still_due and page.expired:  # batch after batch, while one closes some
            page = pending_page(
                project, limit=1, agent=agent, expire_at_most=EXPIRE_BATCH, remind=False
            )
            expired += page.expired
        page = replace(page, expired=expired)
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
        from mir.reviews import export_reviews

        as_json = chosen_format(fmt, as_json) == "json"
        report = export_reviews(project, to_eval=to_eval, suite=suite, sft=sft, agent=agent)
        for note in report.notes:
            error_console().print(literal(f"note: {note}"))
        if as_json:
            _print_json(
                {
                    "reviewed": report.reviewed,
                    "suites": [
                        {
                            "agent": s.agent,
                            "suite": str(s.suite),
                            "added": s.added,
                            "duplicates": s.duplicates,
                        }
                        for s in report.suites
                    ],
                    "sft": str(report.sft) if report.sft else None,
                    "sft_lines": report.sft_lines,
                    "notes": report.notes,
                }
            )
            return
        out = console()
        if not report.reviewed:
            out.print("no reviewed flows")
        for s in report.suites:
            out.print(
                literal(
                    f"{s.agent}: {len(s.added)} case(s) added to {s.suite}"
                    + (f", {len(s.duplicates)} already there" if s.duplicates else "")
                )
            )
        if report.sft is not None:
            out.print(literal(f"{report.sft_lines} chat(s) written to {report.sft}"))

    review_serve.register(review)
    return review


def register(app: typer.Typer) -> None:
    app.add_typer(build_group(), name="review")


def _say_done(page: PendingPage, *, always: bool = False) -> None:
    """What the read did besides reading, one line each: flows closed as expired,
    reminders sent, alerts that failed (on stderr for a listing; stdout otherwise)."""
    out = console() if always else error_console()
    for flow_id in page.expired:
        out.print(literal(f"expired {flow_id}: waited past its TTL, never executed"))
    if always and not page.expired:
        out.print("no flow waited past its TTL")
    for flow_id in page.reminded:
        out.print(literal(f"reminded reviewers of {flow_id}"))
    if page.still_due:
        error_console().print(
            f"{page.still_due} more flow(s) past their TTL are left for `mir review expire`"
        )
    for note in page.notes:
        error_console().print(literal(f"warning: {note}"))


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def age(seconds: float) -> str:
    """``45s``, ``12m``, ``3h 05m``, ``2d 04h``."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600:02d}h"


def render_queue(page: PendingPage) -> None:
    from rich.table import Table

    from mir.reviews import compact

    if not page.items:
        console().print("no flow waits for review")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("flow", "age", "agent", "action"):
        table.add_column(column, no_wrap=True)
    table.add_column("key fields", overflow="fold")  # wrapped, never cut with "…"
    table.add_column("waits for")
    table.add_column("expires in", no_wrap=True)
    shown = 12 if console().is_terminal else None
    sep = "\n" if console().is_terminal else ", "  # a pipe keeps one line a flow
    for item in page.items:
        fields = sep.join(f"{k}={compact(v, 30)}" for k, v in item.fields.items())
        left = (
            age((item.expires_at - item.created_at).total_seconds() - item.age_s)
            if item.expires_at is not None
            else "-"
        )
        # every value may come from a trace file or a model: literal, never markup
        table.add_row(
            literal(item.flow_id[:shown]),
            age(item.age_s),
            literal(item.agent),
            literal(item.action),
            literal(fields),
            literal(item.waits_for),
            left,
        )
    print_listing(table)
    rest = page.total - page.offset - len(page.items)
    if rest > 0:
        after = page.offset + len(page.items)
        console().print(f"{len(page.items)} of {page.total} shown; next: --offset {after}")
