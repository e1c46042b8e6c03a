"""What ``mir reviewers keygen``, ``add`` and ``list`` say, in words (from ``NewKey``,
``Declared`` and the roster's rows, no terminal: the CLI only prints the lines)."""

from __future__ import annotations

from typing import Any

from mir.reviewers.enrolment import Declared, NewKey


def key_lines(name: str, key: NewKey) -> list[str]:
    """Where the private key went (and a warning when that is inside the project), then
    how to declare its public key (the key itself is printed alone, on stdout)."""
    lines = [f"private key written to {key.path} (keep it secret; never commit it)"]
    if key.in_project:
        lines.append(f"warning: {key.path} is inside the project: keep it out of git")
    lines.append("declare it with:")
    lines.append(f"  mir reviewers add {name} --role ROLE --public-key {key.public_key}")
    return lines


def declared_line(name: str, done: Declared) -> str:
    """A reviewer added, or one replaced with what it was and what it is now."""
    old, new, path = done.replaced, done.reviewer, done.roster
    if old is None:
        return f"added reviewer {name} to {path}"
    return (
        f"replaced reviewer {name} in {path} (was roles "
        f"{', '.join(old.roles) or 'none'}, key {old.fingerprint}; now roles "
        f"{', '.join(new.roles) or 'none'}, key {new.fingerprint})"
    )


ROSTER_COLUMNS = ("name", "roles", "key", "web login")


def roster_cells(row: dict[str, Any]) -> list[str]:
    """A ``roster_rows`` row in ``mir reviewers list``, in ``ROSTER_COLUMNS`` order."""
    return [
        row["name"],
        ", ".join(row["roles"]),
        row["fingerprint"],
        "yes" if row["login"] else "no",
    ]
