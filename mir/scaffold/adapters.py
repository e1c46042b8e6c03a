"""Real implementations of the scaffold ports: jinja2, the filesystem, tomlkit, validators."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from mir.errors import ConfigError, UsageError


def builtin_template_root() -> Path:
    """``mir/_templates`` inside an installed wheel, else ``templates/`` of the repository."""
    package = Path(__file__).resolve().parent.parent  # the installed ``mir`` package
    shipped = package / "_templates"
    return shipped if shipped.is_dir() else package.parent / "templates"


class JinjaTemplates:
    """Renders mir's templates; an override folder wins file by file.

    A template missing from the override folder falls back to the built-in one, so a
    team can replace only ``capability/domain.py.j2`` and keep the rest.
    """

    def __init__(self, override: Path | None = None, builtin: Path | None = None) -> None:
        import jinja2  # ~0.2 s: imported only when something is rendered

        if override is not None and not override.is_dir():
            raise UsageError(
                f"template folder {override} does not exist",
                hint="pass --templates DIR or fix [tool.mir] templates",
            )
        roots = [override] if override is not None else []
        roots.append(builtin or builtin_template_root())
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(r) for r in roots]),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # renders code and markdown, never HTML
        )
        self._errors = (jinja2.TemplateError,)

    def render(self, name: str, variables: Mapping[str, Any]) -> str:
        try:
            template = self._env.get_template(name)
            return template.render(**variables)
        except self._errors as exc:
            where = getattr(exc, "filename", None) or name
            line = getattr(exc, "lineno", None)
            location = f"{where}:{line}" if line else str(where)
            raise ConfigError(f"template error: {exc}", where=location) from exc


class DiskWorkspace:
    """The real filesystem. Folders it creates are removed again if a write is undone."""

    def __init__(self) -> None:
        self._made: list[Path] = []

    def read_text(self, path: Path) -> str | None:
        try:
            # newline="": keep the user's line endings, so an edit changes only what it adds.
            with path.open(encoding="utf-8", newline="") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
        except NotADirectoryError as exc:
            raise UsageError(
                "a file stands where a folder of this path should be", where=str(path)
            ) from exc
        except IsADirectoryError as exc:
            raise UsageError("is a folder where a file is expected", where=str(path)) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError("file is not valid UTF-8", where=str(path)) from exc

    def create(self, path: Path, text: str) -> None:
        missing = [p for p in reversed(path.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        self._made.extend(missing)
        # "x": never overwrite, even if the file appeared after the plan was checked.
        with path.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)

    def replace(self, path: Path, text: str) -> None:
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        for folder in path.parents:
            if folder not in self._made or any(folder.iterdir()):
                break
            folder.rmdir()
            self._made.remove(folder)


class TomlkitEditor:
    """Adds ``[tool.mir]`` with tomlkit, so the rest of the file keeps its exact text."""

    def tool_mir(self, text: str, where: str) -> dict[str, Any] | None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(
                f"invalid TOML: {exc}", where=where, hint="fix it, then re-run"
            ) from exc
        tool = data.get("tool", {})
        table = tool.get("mir") if isinstance(tool, dict) else None
        if table is not None and not isinstance(table, dict):
            raise ConfigError("tool.mir must be a table", where=where)
        return table

    def add_tool_mir(self, text: str, settings: Mapping[str, Any], where: str) -> str:
        """``text`` with a ``[tool.mir]`` table appended at the end.

        Appending (rather than inserting next to other ``[tool.*]`` tables) keeps every
        byte of the user's file where it was; tomlkit renders the table so values are
        quoted correctly, and the result is parsed again before it is accepted.
        """
        import tomlkit

        table = tomlkit.table()
        table.add(tomlkit.comment("mir: capability-first layout, boundaries, agents"))
        for key, value in settings.items():
            table.add(key, value)
        document = tomlkit.document()
        document.add("tool", tomlkit.table(is_super_table=True))
        document["tool"].add("mir", table)
        newline = "\r\n" if "\r\n" in text else "\n"
        block = tomlkit.dumps(document).replace("\n", newline)
        ending = "" if not text or text.endswith("\n") else newline
        spacer = newline if text.strip() else ""
        result = f"{text}{ending}{spacer}{block}"
        try:
            added = tomllib.loads(result).get("tool", {}).get("mir")
        except tomllib.TOMLDecodeError:
            added = None
        if added != dict(settings):
            raise ConfigError(
                "cannot append a [tool.mir] table (is 'tool' an inline table?)",
                where=where,
                hint="add [tool.mir] by hand, then re-run `mir init`",
            )
        return result


class GeneratedFileCheck:
    """Validates rendered files by kind, so a broken template never reaches the disk."""

    def check(self, path: PurePosixPath, text: str) -> None:
        where = f"rendered {path}"
        hint = "fix the template that produced it"
        if path.suffix == ".py":
            try:
                ast.parse(text)
            except SyntaxError as exc:
                raise ConfigError(
                    f"not valid Python: {exc.msg}", where=f"{where}:{exc.lineno}", hint=hint
                ) from exc
        elif path.suffix == ".toml":
            try:
                tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"not valid TOML: {exc}", where=where, hint=hint) from exc
        elif path.suffix == ".yaml" and path.parent.name in ("agents", "evals"):
            self._check_yaml(path, text, where, hint)
        elif path.name == "CLAUDE.md" and len(path.parts) > 1:
            self._check_intent_doc(text, where, hint)

    def _check_yaml(self, path: PurePosixPath, text: str, where: str, hint: str) -> None:
        import yaml
        from pydantic import ValidationError

        from mir.contracts import AgentContract, EvalSuite

        model = AgentContract if path.parent.name == "agents" else EvalSuite
        try:
            model.model_validate(yaml.safe_load(text))
        except (yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(
                f"not a valid {model.__name__}: {_first_problem(exc)}", where=where, hint=hint
            ) from exc

    def _check_intent_doc(self, text: str, where: str, hint: str) -> None:
        import yaml
        from pydantic import ValidationError

        from mir.contracts import IntentDoc

        parts = text.split("---\n", 2)
        if len(parts) != 3 or parts[0] != "":
            raise ConfigError("no front matter", where=where, hint=hint)
        try:
            IntentDoc.model_validate(yaml.safe_load(parts[1]))
        except (yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(
                f"not a valid IntentDoc: {_first_problem(exc)}", where=where, hint=hint
            ) from exc


def _first_problem(exc: Exception) -> str:
    """One line, like every other mir error: the first invalid field, or the YAML problem."""
    from pydantic import ValidationError

    from mir.project import describe_validation_error

    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    return str(exc).splitlines()[0]
