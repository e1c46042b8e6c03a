"""``mir reviewers keygen|add|list|password``: each one use case, from the options as
given (a project folder or none) to what the command says."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.reviewers.domain import Reviewer


@dataclass(frozen=True)
class NewKey:
    path: Path  # the private key's file (0600)
    public_key: str  # for reviewers.toml
    in_project: bool  # the file is inside the project: it must stay out of git


def make_key(name: str, *, out: Path | None, project: Path | None) -> NewKey:
    """A key pair for ``name``: the private key written to ``out`` (default
    ``~/.config/mir/keys/NAME.key``), never inside the project's state folder. Outside a
    project (no ``project`` given) there is no state folder to avoid."""
    from mir.errors import MirUserError
    from mir.project import find_project
    from mir.reviewers.keys import default_key_path, generate_key, write_private_key

    _reviewer(name, (), "ed25519:" + "A" * 43 + "=")  # the name is valid (exit 2 if not)
    try:
        found = find_project(project)
        state_dir, root = found.state_dir, found.root
    except MirUserError:
        if project is not None:
            raise
        state_dir = root = None
    key = generate_key()
    path = write_private_key(key, out if out is not None else default_key_path(name), state_dir)
    inside = root is not None and root.resolve() in path.parents
    return NewKey(path, key.public_key, inside)


@dataclass(frozen=True)
class Declared:
    reviewer: Reviewer
    replaced: Reviewer | None  # the one declared before under that name (``--replace``)
    roster: Path


def declare(
    name: str, *, roles: list[str], public_key: str, replace: bool, project: Path | None
) -> Declared:
    """Add a reviewer to reviewers.toml (one already declared only with ``replace``)."""
    from mir.project import find_project
    from mir.reviewers.roster import add_reviewer, roster_path

    root = find_project(project).root
    reviewer = _reviewer(name, tuple(roles), public_key.strip())
    old = add_reviewer(root, reviewer, replace=replace)
    return Declared(reviewer, old, roster_path(root))


def roster_rows(project: Path | None) -> list[dict[str, Any]]:
    """The declared reviewers by name: name, roles, fingerprint, whether a login is set."""
    from mir.project import find_project
    from mir.reviewers.logins import has_login
    from mir.reviewers.roster import describe, load_reviewers

    found = find_project(project)
    return [
        {**describe(r), "login": has_login(found.state_dir, r.name)}
        for r in sorted(load_reviewers(found.root).values(), key=lambda r: r.name)
    ]


def set_login(name: str, *, password: Callable[[], str], project: Path | None) -> None:
    """Set a declared reviewer's web login; ``password`` is asked only once the
    reviewer is known to be declared."""
    from mir.project import find_project
    from mir.reviewers.logins import set_password
    from mir.reviewers.roster import load_reviewers, reviewer_named

    found = find_project(project)
    reviewer_named(load_reviewers(found.root), name, found.root)
    set_password(found.root, found.state_dir, name, password())


def _reviewer(name: str, roles: tuple[str, ...], public_key: str) -> Reviewer:
    """A reviewer from the command line: a bad name, role or key is one usage error."""
    from pydantic import ValidationError

    from mir.errors import UsageError

    try:
        return Reviewer(name=name, roles=roles, public_key=public_key)
    except ValidationError as exc:
        raise UsageError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from exc
