"""``mir models``: the model registry (``models.toml``) and its history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli import models_canary
from mir.cli.output import (
    chosen_format,
    console,
    format_option,
    json_option,
    literal,
    print_listing,
    project_option,
)

if TYPE_CHECKING:
    from mir.project import Project

PROJECT = project_option()
FORMAT = format_option()
JSON = json_option()
WHY = typer.Option(None, "--why", help="Why (kept in the history).")
BY = typer.Option(None, "--by", help="Who (default: the login name).")


def _project(path: Path | None) -> Project:
    from mir.project import find_project

    return find_project(path)


def _why(why: str | None) -> str | None:
    from mir.models import refuse_secret

    return refuse_secret("--why", why)


def _by(by: str | None) -> str:
    from mir.models import author

    return author(by)


def _gate_column(forced: bool, gate: dict | None) -> str:
    """``passed`` / ``failed`` when a gate ran, then ``forced`` and ``replayed``."""
    gate = gate or {}
    words = [("passed" if gate.get("passed") else "failed")] if gate.get("ran") else []
    words += [word for word, on in (("forced", forced), ("replayed", gate.get("replayed"))) if on]
    return ", ".join(words)


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
        from rich.table import Table

        from mir.models import read_registry

        proj = _project(project)
        registry = read_registry(proj.root)
        entries = list(registry.entries) if registry else []
        if chosen_format(fmt, as_json) == "json":
            rows = [e.model_dump(mode="json", exclude_none=True) for e in entries]
            console().file.write(json.dumps(rows, indent=2) + "\n")
            return
        if not entries:
            console().print("no models registered (mir models register NAME VERSION ...)")
            return
        table = Table(box=None, pad_edge=False)
        for column in ("name", "version", "stage", "share", "provider", "artifact"):
            table.add_column(column, no_wrap=True)
        for e in entries:
            table.add_row(
                literal(e.name),
                literal(e.version),
                literal(str(e.stage), style="bold" if e.stage == "production" else ""),
                literal(None if e.share is None else f"{e.share:g}"),
                literal(e.provider),
                literal(e.artifact),
            )
        print_listing(table)

    @group.command("show")
    def show_command(
        name: str = typer.Argument(..., help="Registry name."), project: Path | None = PROJECT
    ) -> None:
        """Every version of one model, field by field."""
        from mir.errors import UsageError
        from mir.models import read_registry

        registry = read_registry(_project(project).root)
        versions = registry.versions(name) if registry else []
        if not versions:
            known = ", ".join(registry.names) if registry else "none"
            raise UsageError(f"unknown model {name!r} (registry names: {known or 'none'})")
        out = console()
        for entry in versions:
            out.print(literal(f"{entry.ref}  [{entry.stage}]", style="bold"))
            for key, value in entry.model_dump(mode="json", exclude_none=True).items():
                if key not in ("name", "version", "stage"):
                    out.print(literal(f"  {key}: {value}"))

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
        from mir.models import register_version

        entry = register_version(
            _project(project).root,
            name=name,
            version=version,
            artifact=artifact,
            provider=provider,
            api_base=api_base,
            quantization=quantization,
            context=context,
            queue=queue,
            notes=notes,
            by=by,
            why=why,
        )
        sha = f" sha256 {entry.sha256[:12]}..." if entry.sha256 else ""
        console().print(literal(f"registered {entry.ref} as candidate{sha}"))

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
        from mir.errors import UsageError
        from mir.models import Stage
        from mir.releases import promote

        if to not in ("shadow", "canary", "production"):
            raise UsageError(f"--to: unknown stage {to!r}", hint="shadow, canary or production")
        proj = _project(project)
        result = promote(
            proj,
            name,
            version,
            Stage(to),
            by=_by(by),
            why=_why(why) or "",
            share=share,
            force=force,
            responses=responses,
        )
        out = console()
        if result.report is not None:
            render(result.report, "table")
        elif result.note:
            out.print(literal(result.note))
        if result.entry is None:
            if result.report is not None and result.report.exit_code:
                out.print(literal(f"not promoted: the eval gate failed for {name}@{version}"))
            else:
                out.print(
                    literal(
                        f"not promoted: the gate replayed recorded answers (--responses), "
                        f"not answers of {name}@{version}"
                    )
                )
            out.print(literal("(--force promotes anyway; the history will say so)"))
            raise typer.Exit(1)
        forced = ""
        if force and result.report and result.report.exit_code:
            forced = " (forced past a failed gate)"
        elif force and result.replayed:
            forced = " (forced on a replayed gate)"
        out.print(literal(f"{result.entry.ref} is now {result.entry.stage}{forced}"))

    @group.command("rollback")
    def rollback_command(
        name: str = typer.Argument(..., help="Registry name whose production goes back."),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Production goes back to the version that was production before it."""
        from mir.models import rollback

        entry = rollback(_project(project).root, name, by=_by(by), why=_why(why) or "rollback")
        console().print(literal(f"{entry.ref} is production again"))

    @group.command("retire")
    def retire_command(
        name: str = typer.Argument(..., help="Registry name."),
        version: str = typer.Argument(..., help="The version to retire (final)."),
        why: str | None = WHY,
        by: str | None = BY,
        project: Path | None = PROJECT,
    ) -> None:
        """Retire a version for good (kept for the record; never promoted again)."""
        from mir.models import Stage, set_stage

        entry = set_stage(
            _project(project).root, name, version, Stage.RETIRED, by=_by(by), why=_why(why) or ""
        )
        console().print(literal(f"{entry.ref} is retired"))

    @group.command("history")
    def history_command(
        name: str = typer.Argument(..., help="Registry name."),
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> None:
        """Every change of a model's versions: who, when, why, forced, the gate."""
        from rich.table import Table

        from mir.errors import UsageError
        from mir.models import changes, read_registry

        root = _project(project).root
        rows = changes(root, name)
        registry = read_registry(root)
        if not rows and (registry is None or name not in registry.names):
            # A typo said "no history" and exit 0, like a real model never edited.
            known = ", ".join(registry.names) if registry else "none"
            raise UsageError(f"unknown model {name!r} (registry names: {known})")
        if chosen_format(fmt, as_json) == "json":
            data = [r.model_dump(mode="json") for r in rows]
            console().file.write(json.dumps(data, indent=2) + "\n")
            return
        if not rows:
            console().print(literal(f"no history for {name}"))
            return
        table = Table(box=None, pad_edge=False)
        for column in ("at", "version", "from", "to", "by", "gate", "why"):
            table.add_column(column, no_wrap=column != "why")
        for r in rows:
            table.add_row(
                literal(r.at.strftime("%Y-%m-%d %H:%M:%S")),
                literal(r.version),
                literal(r.from_stage),
                literal(r.to_stage, style="red" if r.to_stage == "refused" else ""),
                literal(r.by),
                literal(_gate_column(r.forced, r.gate)),
                literal(r.why),
            )
        print_listing(table)

    # `compare` and `check` (the canary's evidence and its automatic rollback)
    models_canary.add_commands(group)
    app.add_typer(group, name="models")
