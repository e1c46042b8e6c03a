"""``mir models``: the model registry (``models.toml``) and its history."""

from __future__ import annotations

from pathlib import Path

import typer

from mir.cli import models_canary
from mir.cli.options import FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, console, literal, print_models, print_rows, say

WHY = typer.Option(None, "--why", help="Why (kept in the history).")
BY = typer.Option(None, "--by", help="Who (default: the login name).")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="The model registry (models.toml): register versions, promote them through "
        "shadow, canary and production (the eval gate), roll back, and their history.",
        no_args_is_help=True,
    )

    @group.command("list")
    def list_command(
        fmt: str | None = FORMAT, as_json: bool = JSON, project: Path | None = PROJECT
    ) -> None:
        """Every version of every model, with its stage."""
        from mir.models import ENTRY_COLUMNS, entry_row, model_entries, project_root

        entries = model_entries(project_root(project))
        if chosen_format(fmt, as_json) == "json":
            print_models(entries, ascii=True, exclude_none=True)
            return
        if not entries:
            say("no models registered (mir models register NAME VERSION ...)")
            return
        print_rows(ENTRY_COLUMNS, map(entry_row, entries))

    @group.command("show")
    def show_command(
        name: str = typer.Argument(..., help="Registry name."), project: Path | None = PROJECT
    ) -> None:
        """Every version of one model, field by field."""
        from mir.models import entry_fields, model_versions, project_root

        for entry in model_versions(project_root(project), name):
            console().print(literal(f"{entry.ref}  [{entry.stage}]", style="bold"))
            say(*(f"  {field}" for field in entry_fields(entry)))

    @group.command("register")
    def register_command(
        name: str = typer.Argument(..., help="Registry name routes will use."),
        version: str = typer.Argument(..., help="A new version of it."),
        artifact: str = typer.Option(
            ..., "--artifact", help="A .gguf path, package:PKG/FILE.gguf, or a litellm model id."
        ),
        provider: str = typer.Option("llama", "--provider", help="llama or litellm."),
        api_base: str | None = typer.Option(None, "--api-base", help="litellm: server URL."),
        quantization: str | None = typer.Option(
            None, "--quantization", help="For the record, e.g. Q4_K_M (mir does not read it)."
        ),
        context: int | None = typer.Option(
            None,
            "--context",
            help="llama: context window in tokens, at most what the GGUF was trained on.",
        ),
        queue: int | None = typer.Option(
            None,
            "--queue",
            help="Calls that may wait for this version before it sheds "
            "(default: [tool.mir.model] queue).",
        ),
        notes: str | None = typer.Option(
            None, "--notes", help="Free text kept in models.toml (refused if it holds a secret)."
        ),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Add a version as a candidate (llama files: its sha256 is computed and kept)."""
        from mir.models import project_root, register_version, registered_line

        entry = register_version(
            project_root(project), name=name, version=version, artifact=artifact,
            provider=provider, api_base=api_base, quantization=quantization, context=context,
            queue=queue, notes=notes, by=by, why=why,
        )  # fmt: skip
        say(registered_line(entry))

    @group.command("promote")
    def promote_command(
        name: str = typer.Argument(..., help="Registry name."),
        version: str = typer.Argument(..., help="The version to move."),
        to: str = typer.Option(..., "--to", help="shadow, canary or production."),
        share: float | None = typer.Option(None, "--share", help="canary: share of flows."),
        force: bool = typer.Option(
            False, "--force", help="Promote to production even if the eval gate fails."
        ),
        responses: Path | None = typer.Option(
            None,
            "--responses",
            dir_okay=False,
            help="Gate: replay recorded model outputs (JSONL) instead of calling the model "
            "(a replayed gate promotes to production only with --force).",
        ),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Move a version to shadow, canary or production (production: the agents' eval
        suites run against it first; exit 1 and nothing changed when the gate fails)."""
        from mir.cli.eval import render
        from mir.releases import promote_to, promotion_lines

        result = promote_to(
            project, name, version, to, by=by, why=why, share=share, force=force,
            responses=responses,
        )  # fmt: skip
        if result.report is not None:
            render(result.report, "table")
        elif result.note:
            say(result.note)
        say(*promotion_lines(result, name, version, force))
        if result.entry is None:
            raise typer.Exit(1)

    @group.command("rollback")
    def rollback_command(
        name: str = typer.Argument(..., help="Registry name whose production goes back."),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Production goes back to the version that was production before it."""
        from mir.models import rollback_production

        entry = rollback_production(project, name, by=by, why=why)
        say(f"{entry.ref} is production again")

    @group.command("retire")
    def retire_command(
        name: str = typer.Argument(..., help="Registry name."),
        version: str = typer.Argument(..., help="The version to retire (final)."),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Retire a version for good (kept for the record; never promoted again)."""
        from mir.models import retire_version

        entry = retire_version(project, name, version, by=by, why=why)
        say(f"{entry.ref} is retired")

    @group.command("history")
    def history_command(
        name: str = typer.Argument(..., help="Registry name."),
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> None:
        """Every change of a model's versions: who, when, why, forced, the gate."""
        from mir.models import CHANGE_COLUMNS, change_row, model_history, project_root

        rows = model_history(project_root(project), name)
        if chosen_format(fmt, as_json) == "json":
            print_models(rows, ascii=True)
            return
        if not rows:
            say(f"no history for {name}")
            return
        print_rows(CHANGE_COLUMNS, map(change_row, rows), wrap=("why",))

    # `compare` and `check` (the canary's evidence and its automatic rollback)
    models_canary.add_commands(group)
    app.add_typer(group, name="models")
