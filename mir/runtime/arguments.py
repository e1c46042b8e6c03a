"""Reading JSON command-line arguments: inline JSON, ``@FILE`` or ``-`` (stdin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mir.errors import UsageError


def cwd_hint(path: Path) -> str | None:
    """For a relative path that was not found: where it was looked for (run from another
    folder, ``@input.json`` is not the project's file)."""
    if path.is_absolute():
        return None
    return f"read relative to the current folder: {Path.cwd() / path}"


def read_json_object(value: str, option: str) -> dict[str, Any]:
    """A JSON object from ``value``; errors name the option or file and the position."""
    if value == "-":
        text, where = sys.stdin.read(), f"{option} (stdin)"
    elif value.startswith("@"):
        path = Path(value[1:])
        try:
            text, where = path.read_text(encoding="utf-8"), str(path)
        except FileNotFoundError as exc:
            raise UsageError(f"{option}: file not found: {path}", hint=cwd_hint(path)) from exc
        except IsADirectoryError as exc:
            raise UsageError(f"{option}: {path} is a folder, not a file") from exc
        except UnicodeDecodeError as exc:
            raise UsageError(f"{option}: {path} is not valid UTF-8") from exc
    else:
        text, where = value, option

    if not text.strip():  # "Expecting value at line 1 column 1" did not say this
        raise UsageError(
            "empty: no JSON given", where=where, hint="pass a JSON object, @FILE or - for stdin"
        )

    return parse_json_object(text, where)


def parse_json_object(
    text: str, where: str, hint: str = "pass a JSON object, @FILE or - for stdin"
) -> dict[str, Any]:
    """``text`` as a JSON object, read strictly: NaN / Infinity and a key given twice are
    refused (which value is meant is ambiguous), like a number too long or nesting too
    deep; each as a UsageError at ``where``."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # {"amount": 10, "amount": 9000}: json keeps the last, a reviewer reading the
        # file may see the first. Which one the caller meant is ambiguous, so refuse.
        seen: dict[str, Any] = {}
        for key, item in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}: which value is meant is ambiguous")
            seen[key] = item
        return seen

    try:
        data = json.loads(text, parse_constant=no_constants, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            where=where,
            hint=hint,
        ) from exc
    except ValueError as exc:  # also a number of more than 4,300 digits
        raise UsageError(str(exc)[:200], where=where) from exc
    except RecursionError as exc:  # nesting deeper than the decoder's recursion limit
        raise UsageError("JSON nested too deep to read", where=where) from exc
    if not isinstance(data, dict):
        raise UsageError(
            f"expected a JSON object, got {type(data).__name__}",
            where=where,
            hint='e.g. {"order_id": "A1"}',
        )
    return data
