"""Reading ``models.toml`` (the committed registry at the project root).

tomlkit reads it (the same library writes it back with comments kept); every problem is
a ``ConfigError`` naming ``models.toml:LINE``. No file means no registry: routes then
name model files and model ids directly, as before.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mir.errors import ConfigError, did_you_mean
from mir.models.domain import PACKAGE_PREFIX, ModelEntry, Registry, RegistryError

FILE_NAME = "models.toml"
_TABLE = re.compile(r"^[ \t]*\[\[[ \t]*models[ \t]*\]\]", re.MULTILINE)
# Opens or closes a TOML multi-line string (an escaped quote inside one does not).
_TRIPLE = re.compile(r'(?<!\\)("""|\'\'\')')


def registry_path(root: Path) -> Path:
    return root / FILE_NAME


def read_registry(root: Path) -> Registry | None:
    """The project's registry, or None when it has no ``models.toml``."""
    path = registry_path(root)
    text = read_registry_text(path)
    return None if text is None else parse_registry(text, path)


def read_registry_text(path: Path) -> str | None:
    """The file's text, None when there is none; unreadable (not UTF-8, a directory,
    no permission) is one ``ConfigError``, so every command that edits it says so too."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the model registry: {exc}", where=str(path)) from exc


def parse_registry(text: str, path: Path) -> Registry:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        document = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        raise ConfigError(
            f"malformed TOML: {exc}", where=f"{path}:{exc.line}", hint="fix the syntax"
        ) from exc
    unknown = sorted(set(document) - {"models"})
    if unknown:
        raise ConfigError(
            f"unknown top-level key {unknown[0]!r}{_did_you_mean(unknown[0], ['models'])}",
            where=f"{path}:{_key_line(text, 1, None, unknown[0])}",
            hint="the registry is a list of [[models]] tables",
        )
    tables = document.get("models", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(
            "'models' must be an array of tables", where=str(path), hint="write [[models]]"
        )
    lines = table_lines(text)
    entries = []
    for index, table in enumerate(tables):
        try:
            entries.append(ModelEntry.model_validate(table))
        except ValidationError as exc:
            message, key = _first_problem(exc, table)
            where = _where(path, lines, index)
            if key is not None and index < len(lines):
                end = lines[index + 1] if index + 1 < len(lines) else None
                where = f"{path}:{_key_line(text, lines[index], end, key)}"
            raise ConfigError(message, where=where) from exc
    registry = Registry(entries=tuple(entries))
    try:
        registry.check()
    except RegistryError as exc:
        raise ConfigError(str(exc), where=_where(path, lines, exc.index)) from exc
    return registry


def table_lines(text: str) -> list[int]:
    """The 1-based line of each ``[[models]]`` header, in order; a line inside a
    multi-line string (a ``notes = \"\"\"...\"\"\"`` that quotes a header) is not one."""
    found, quote = [], None
    for number, line in enumerate(text.splitlines(), 1):
        if quote is None and _TABLE.match(line):
            found.append(number)
        for match in _TRIPLE.finditer(line):
            if quote is None:
                quote = match.group()
            elif match.group() == quote:
                quote = None
    return found


def _where(path: Path, lines: list[int], index: int | None) -> str:
    if index is None or index >= len(lines):
        return str(path)
    return f"{path}:{lines[index]}"


def _key_line(text: str, start: int, end: int | None, key: str) -> int:
    """The line of ``key = ...`` between lines ``start`` and ``end`` (a table's header and
    the next one), or ``start`` when it is not written there on a line of its own."""
    name = rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')"""
    # ``key = ...``, or a table header: ``[key]``, ``[[key]]``, ``[key.sub]``
    pattern = re.compile(rf"^[ \t]*(?:{name}[ \t]*=|\[\[?[ \t]*{name}[ \t]*[\].])")
    quote = None  # inside a multi-line string: its lines are text, not keys
    for number, line in enumerate(text.splitlines()[start - 1 : end], start):
        if quote is None:
            if number != start and _TABLE.match(line):
                break
            if pattern.match(line):
                return number
        for match in _TRIPLE.finditer(line):
            if quote is None:
                quote = match.group()
            elif match.group() == quote:
                quote = None
    return start


def _did_you_mean(value: object, choices: list[str]) -> str:
    close = did_you_mean(value, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _first_problem(exc: ValidationError, table: dict[str, Any]) -> tuple[str, str | None]:
    """The problem to report, and the table's key it is on (None: the whole table). A
    misspelt key comes first: it explains the 'missing' error of the key it meant."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    error = errors[0]
    field = ".".join(str(p) for p in error["loc"])
    label = f"{table.get('name', '?')}@{table.get('version', '?')}"
    message = error["msg"].removeprefix("Value error, ")
    key = str(error["loc"][0]) if error["loc"] and str(error["loc"][0]) in table else None
    if error["type"] == "extra_forbidden":
        known = [k for k in ModelEntry.model_fields if k not in table]
        return f"{label}: unknown key {field!r}{_did_you_mean(field, known)}", key
    if error["type"] == "missing":
        return f"{label}: missing {field!r}", None
    if error["type"] == "enum" or error["type"] == "literal_error":
        choices = [str(v).strip("'") for v in re.findall(r"'([^']*)'", message)]
        message += _did_you_mean(error.get("input"), choices)
    return (f"{label}: {field}: {message}" if field else f"{label}: {message}"), key


def artifact_path(entry: ModelEntry, root: Path) -> Path:
    """The GGUF file a llama entry names: a path under the project root, or a file inside
    an installed package (``package:PACKAGE/FILE``), located without importing it."""
    if entry.provider != "llama":
        raise ValueError(f"{entry.ref} is a {entry.provider} model, not a file")
    if entry.artifact.startswith(PACKAGE_PREFIX):
        package, _, file = entry.artifact.removeprefix(PACKAGE_PREFIX).partition("/")
        spec = importlib.util.find_spec(package) if package else None
        if spec is None or not spec.origin or not file:
            raise ConfigError(
                f"{entry.ref}: package {package!r} is not installed",
                where=FILE_NAME,
                hint="install it, or point 'artifact' at a .gguf path",
            )
        return Path(spec.origin).parent / file
    path = Path(entry.artifact).expanduser()
    return path if path.is_absolute() else root / path
