"""``mir run agent``, ``mir approve``, ``mir reject``: one decision flow, rendered.

Exit codes: 0 when the flow ended as designed (executed, fallback, pending review,
rejected, stale), 1 when it aborted, 2 for usage or configuration errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.output import chosen_format, console, format_option, json_option, step_spinner

if TYPE_CHECKING:
    from mir.runtime import DecisionRecord

# The decision record as text (default) or JSON; --json is the same as --format json.
FORMATS = ("text", "json")
JSON_OUT = json_option("Print the decision record as JSON (the same as --format json).")
FORMAT = format_option(FORMATS)
PROJECT = typer.Option(None, "--project", help="Project folder (default: found from the cwd).")
BY = typer.Option(
    None, "--by", help="Reviewer name (default: the reviewer whose key --key is, else $USER)."
)
KEY = typer.Option(
    None,
    "--key",
    help="Your reviewer private key, to sign the review (default: $MIR_REVIEWER_KEY_FILE, "
    "else the key text in $MIR_REVIEWER_KEY).",
)


def register(app: typer.Typer) -> None:
    run = typer.Typer(help="Run responsibility-bound agents.", no_args_is_help=True)

    @run.command("agent")
    def agent_command(
        ref: str = typer.Argument(
            help="capability.agent (e.g. refunds.triage) or a contract path."
        ),
        input: str | None = typer.Option(
            None, "--input", "-i", help="Input: JSON, @FILE or - (stdin); or --batch FILE."
        ),
        context: str | None = typer.Option(
            None, "--context", "-c", help="World state: JSON or @FILE (default: context_loader)."
        ),
        provider: str | None = typer.Option(
            None, "--provider", help="Override routes: llama, litellm, scripted or rules."
        ),
        responses: str | None = typer.Option(
            None, "--responses", help="JSONL of raw model outputs (for --provider scripted)."
        ),
        role: str = typer.Option("agent", "--role", help="Caller role checked against actions."),
        requested_by: str | None = typer.Option(
            None,
            "--as",
            metavar="NAME",
            help="Who asks for the decision (default: $MIR_USER, else the OS user); "
            "a requester never approves their own flow.",
        ),
        priority: int = typer.Option(
            None, "--priority", help="Priority in a busy model's queue (default: the contract's)."
        ),
        deadline_ms: int = typer.Option(
            None,
            "--deadline-ms",
            min=1,
            help="The model must answer within this many ms, or the rules decide (shed).",
        ),
        traceparent: str | None = typer.Option(
            None, "--traceparent", help="W3C trace context: the flow's spans join that trace."
        ),
        show_prompt: bool = typer.Option(
            False,
            "--show-prompt",
            help="Print the prompt the model would see for this input, and stop: no model "
            "call, nothing traced or executed.",
        ),
        batch: Path | None = typer.Option(
            None,
            "--batch",
            metavar="FILE",
            help="Decide every row of a JSONL file (one input object a line), each once: "
            "a re-run skips the rows already decided.",
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="With --batch: the results, one line per row, or a table if it ends in "
            ".parquet (default: FILE.results.jsonl beside FILE).",
        ),
        key: str | None = typer.Option(
            None,
            "--key",
            metavar="FIELD",
            help="With --batch: the field that names a row across re-runs (default: the "
            "row's content).",
        ),
        jobs: int = typer.Option(
            1, "--jobs", "-j", min=1, help="With --batch: decide in N worker processes."
        ),
        workers: bool = typer.Option(
            False, "--workers", help="With --batch: submit the rows to the fleet's `mir worker`s."
        ),
        as_json: bool = JSON_OUT,
        fmt: str | None = FORMAT,
        project: str | None = PROJECT,
    ) -> None:
        """Run one decision: snapshot, infer, validate, route, re-check, execute, trace.
        With --batch, one for every row of a file."""
        from mir.errors import UsageError
        from mir.runtime import preview_prompt, prompt_json, run_agent

        as_json = chosen_format(fmt, as_json, FORMATS) == "json"
        if not role.strip():
            raise UsageError(
                "--role: empty role", hint="name the caller's role, e.g. --role support"
            )
        if batch is not None:
            from mir.cli.batch import run_batch_command

            given = {"--input": input, "--show-prompt": show_prompt or None,
                     "--priority": priority, "--deadline-ms": deadline_ms,
                     "--traceparent": traceparent}  # fmt: skip
            if refused := [name for name, value in given.items() if value is not None]:
                raise UsageError(f"{refused[0]} decides one input: not with --batch")
            return run_batch_command(
                batch, as_json=as_json, ref=ref, out=out, key=key, jobs=jobs, context=context,
                provider=provider, responses=responses, role=role,
                requested_by=requested_by, project=project, workers=workers,
            )  # fmt: skip
        if (out, key, jobs, workers) != (None, None, 1, False):
            raise UsageError("--out, --key, -j and --workers go with --batch FILE")
        if input is None:
            raise UsageError("missing --input", hint="JSON, @FILE or - (stdin); or --batch FILE")
        if show_prompt:
            prompt = preview_prompt(ref, input=input, context=context, project=project)
            if as_json:
                console().print_json(json.dumps(prompt_json(prompt)))
            else:
                for message in prompt.messages:
                    console().out(message.content, highlight=False)
            return

        with step_spinner(enabled=not as_json) as progress:
            record = run_agent(
                ref, input=input, context=context, provider=provider, responses=responses,
                role=role, project=project, progress=progress, priority=priority,
                deadline_ms=deadline_ms, requested_by=requested_by, traceparent=traceparent,
            )  # fmt: skip
        render_record(record, as_json)

    app.add_typer(run, name="run")

    @app.command("approve")
    def approve_command(
        flow_id: str = typer.Argument(help="The flow to approve (a unique prefix is enough)."),
        context: str | None = typer.Option(
            None, "--context", "-c", help="World state now (JSON or @FILE) for the re-check."
        ),
        by: str | None = BY,
        key: str | None = KEY,
        sets: list[str] = typer.Option(
            [],
            "--set",
            metavar="FIELD=VALUE",
            help="Correct a field of the decision (repeatable; VALUE is JSON when it parses, "
            "else a string): the corrected decision is checked again and executed instead.",
        ),
        patch: str | None = typer.Option(
            None, "--patch", help="Correct fields with a JSON object, e.g. '{\"amount\": 80}'."
        ),
        reason: str | None = typer.Option(None, "--reason", help="Why (recorded in the trace)."),
        as_json: bool = JSON_OUT,
        fmt: str | None = FORMAT,
        project: str | None = PROJECT,
    ) -> None:
        """Approve a flow pending review: re-check the world, then execute it (at most once)."""
        from mir.runtime import review_flow

        as_json = chosen_format(fmt, as_json, FORMATS) == "json"
        record = review_flow(
            flow_id, "approve", by=by, context=context, project=project, key=key, sets=sets,
            patch=patch, reason=reason,
        )  # fmt: skip
        render_record(record, as_json)

    @app.command("reject")
    def reject_command(
        flow_id: str = typer.Argument(help="The flow to reject (a unique prefix is enough)."),
        reason: str | None = typer.Option(None, "--reason", help="Why (recorded in the trace)."),
        by: str | None = BY,
        key: str | None = KEY,
        as_json: bool = JSON_OUT,
        fmt: str | None = FORMAT,
        project: str | None = PROJECT,
    ) -> None:
        """Reject a flow pending review: nothing executes."""
        from mir.runtime import review_flow

        as_json = chosen_format(fmt, as_json, FORMATS) == "json"
        render_record(
            review_flow(flow_id, "reject", by=by, reason=reason, project=project, key=key),
            as_json,
        )

    # `mir agents` and `mir store` belong to the same capability; registered here so the
    # app shell's module list stays as it is.
    from mir.cli import agents, store

    agents.register(app)
    store.register(app)


def render_record(record: DecisionRecord, as_json: bool) -> None:
    from mir.runtime import record_json, record_rows

    if as_json:
        console().print_json(json.dumps(record_json(record)))
    else:
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        from mir.cli.output import literal, print_listing

        # Reasons, params and names come from the model, the caller or a file: each value
        # is a Text, so rich never reads it as markup (a reason of "[/bold] x" used to
        # raise after the refund was paid, and "[blink red]PAID[/]" showed as "PAID").
        table = Table.grid(padding=(0, 2))
        for label, text, style in record_rows(record):
            table.add_row(label, literal(text, style=style))
        title = Text(f"{record.agent}  flow {record.flow_id}")
        print_listing(Panel(table, title=title, title_align="left", expand=False))
    if not record.ended_as_designed:
        raise typer.Exit(code=1)
