"""``mir models promote`` as the user asks for it: the stage by name, the project around
the current folder unless one is named, who (``--by``, else the login name) and why
(``--why``, no secret in it), then ``promote`` (through the eval gate into production)."""

from __future__ import annotations

from pathlib import Path

from mir.releases.gate import Promotion, promote


def promote_to(
    project: Path | None,
    name: str,
    version: str,
    to: str,
    *,
    by: str | None,
    why: str | None,
    share: float | None = None,
    force: bool = False,
    responses: Path | None = None,
) -> Promotion:
    """Move ``version`` to the stage named ``to`` (shadow, canary or production; any other
    name is a usage error, before anything is read)."""
    from mir.errors import UsageError
    from mir.models import Stage, author, refuse_secret
    from mir.project import find_project

    if to not in ("shadow", "canary", "production"):
        raise UsageError(f"--to: unknown stage {to!r}", hint="shadow, canary or production")
    return promote(
        find_project(project),
        name,
        version,
        Stage(to),
        by=author(by),
        why=refuse_secret("--why", why) or "",
        share=share,
        force=force,
        responses=responses,
    )
