"""``reviewers.toml``: the project's declared reviewers (committed, at the project root).

tomlkit reads it and writes it back with comments kept. Every problem is a
``ConfigError`` at ``reviewers.toml:LINE``, all of them at once (one line each). No file
means no declared reviewers: ``--by`` is then a free name, as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mir.errors import ConfigError, MirUserError, UsageError
from mir.errors import did_you_mean as closest
from mir.reviewers.domain import Reviewer
from mir.storage import write_atomic

FILE_NAME = "reviewers.toml"


def roster_path(root: Path) -> Path:
    return root / FILE_NAME


def load_reviewers(root: Path) -> dict[str, Reviewer]:
    """The declared reviewers by name; empty when the project has no reviewers.toml."""
    path = roster_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the reviewers: {exc}", where=str(path)) from exc
    return parse_reviewers(text, path)


def has_roster(root: Path) -> bool:
    return roster_path(root).is_file()


def parse_reviewers(text: str, path: Path) -> dict[str, Reviewer]:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        document = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        raise ConfigError(f"malformed TOML: {exc}", where=f"{path}:{exc.line}") from exc
    problems: list[str] = []
    for key in sorted(set(document) - {"reviewers"}):
        problems.append(
            f"{path}:{_line(text, key, top=True)}: unknown top-level key {key!r}"
            f"{did_you_mean(key, ['reviewers'])} (reviewers are [reviewers.NAME] tables)"
        )
    tables = document.get("reviewers", {})
    if not isinstance(tables, dict):
        raise ConfigError("'reviewers' must be a table of [reviewers.NAME]", where=str(path))
    found: dict[str, Reviewer] = {}
    keys: dict[str, str] = {}  # public key -> the reviewer who declared it first
    for name, table in tables.items():
        header = _line(text, name, table=True)
        if not isinstance(table, dict):
            problems.append(f"{path}:{header}: reviewers.{name} must be a table")
            continue
        try:
            reviewer = Reviewer.model_validate({"name": name, **table})
        except ValidationError as exc:
            for error in exc.errors():
                field = ".".join(str(p) for p in error["loc"])
                line = _line(text, field, start=header) if field in table else header
                message = error["msg"].removeprefix("Value error, ")
                if error["type"] == "extra_forbidden":
                    known = [k for k in ("roles", "public_key") if k not in table]
                    message = f"unknown key {field!r}{did_you_mean(field, known)}"
                elif error["type"] == "missing":
                    message = f"missing {field!r}"
                problems.append(f"{path}:{line}: reviewers.{name}: {message}")
            continue
        if reviewer.public_key in keys:
            problems.append(
                f"{path}:{header}: reviewers.{name}: the same public key as "
                f"{keys[reviewer.public_key]!r} (each reviewer has a key of their own)"
            )
            continue
        keys[reviewer.public_key] = name
        found[name] = reviewer
    if problems:
        raise ConfigError("\n".join(problems))
    return found


def reviewer_named(reviewers: dict[str, Reviewer], name: str, root: Path) -> Reviewer:
    """The declared reviewer ``name``, or a UsageError that says who is declared."""
    if name in reviewers:
        return reviewers[name]
    declared = sorted(reviewers)
    raise UsageError(
        f"{name!r} is not a reviewer declared in {roster_path(root)}{did_you_mean(name, declared)}",
        hint=f"declared: {', '.join(declared) or 'none'}; add one with `mir reviewers add`",
    )


def add_reviewer(root: Path, reviewer: Reviewer, *, replace: bool = False) -> Reviewer | None:
    """Write ``reviewer`` into reviewers.toml (created when missing, comments kept).
    Returns the reviewer it replaced; an existing one is replaced only with ``replace``."""
    import tomlkit

    path = roster_path(root)
    current = load_reviewers(root)  # a broken file is reported, never overwritten
    old = current.get(reviewer.name)
    if old is not None and not replace:
        raise UsageError(
            f"reviewer {reviewer.name!r} is already declared in {path} "
            f"(roles {', '.join(old.roles) or 'none'}, key {old.fingerprint})",
            hint="pass --replace to replace it",
        )
    for other in current.values():
        if other.name != reviewer.name and other.public_key == reviewer.public_key:
            raise UsageError(
                f"that public key is already {other.name!r}'s",
                hint="each reviewer signs with a key of their own",
            )
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    document = tomlkit.parse(text)
    if "reviewers" not in document:
        document["reviewers"] = tomlkit.table(is_super_table=True)
    entry = tomlkit.table()
    entry["roles"] = list(reviewer.roles)
    entry["public_key"] = reviewer.public_key
    document["reviewers"][reviewer.name] = entry  # type: ignore[index]
    rendered = tomlkit.dumps(document)
    parse_reviewers(rendered, path)  # what is written always loads
    write_atomic(path, rendered)
    return old


def did_you_mean(value: object, choices: list[str]) -> str:
    close = closest(value, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _line(text: str, key: str, *, table: bool = False, top: bool = False, start: int = 1) -> int:
    """The line of ``[reviewers.KEY]`` (``table``), of a top-level ``KEY = ...`` or
    ``[KEY...]`` (``top``), or of ``KEY = ...`` from ``start`` to the next table header;
    ``start`` when it is not found."""
    name = rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')"""
    if top:
        pattern = re.compile(rf"^[ \t]*(?:{name}[ \t]*=|\[\[?[ \t]*{name}[ \t]*[\].])")
        table = True  # search the whole file
    elif table:
        pattern = re.compile(rf"^[ \t]*\[[ \t]*reviewers[ \t]*\.[ \t]*{name}[ \t]*\]")
    else:
        pattern = re.compile(rf"^[ \t]*{name}[ \t]*=")
    for number, line in enumerate(text.splitlines()[start - 1 :], start):
        if not table and number != start and line.lstrip().startswith("["):
            break
        if pattern.match(line):
            return number
    return start


def describe(reviewer: Reviewer) -> dict[str, Any]:
    return {
        "name": reviewer.name,
        "roles": list(reviewer.roles),
        "public_key": reviewer.public_key,
        "fingerprint": reviewer.fingerprint,
    }


def declared_roles(root: Path) -> dict[str, tuple[str, ...]] | None:
    """Each declared reviewer's roles; None without reviewers.toml, or when it does not
    read (its own problems are `mir reviewers list`'s and the approval's to report)."""
    if not has_roster(root):
        return None
    try:
        reviewers = load_reviewers(root)
    except MirUserError:
        return None
    return {name: tuple(r.roles) for name, r in reviewers.items()}
