"""Reading import-linter configuration files, exactly as ``lint-imports`` does.

INI files (``setup.cfg``, ``.importlinter``) hold an ``[importlinter]`` section and one
``[importlinter:contract:ID]`` section per contract; a multi-line value is a list, a
one-line value a string. ``pyproject.toml`` holds ``[tool.importlinter]`` with a
``[[tool.importlinter.contracts]]`` array; TOML booleans become the strings
``"True"``/``"False"`` so both forms parse through the same option rules. Without an
explicit file, the first of ``setup.cfg``, ``.importlinter``, ``pyproject.toml`` that
holds import-linter settings is used (import-linter's own search order).
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.importlinter.domain.options import RawConfig, RawContract

SECTION = "importlinter"
SEARCH_ORDER = ("setup.cfg", ".importlinter", "pyproject.toml")


class ConfigFiles:
    """The production ``ConfigSource``: import-linter config files on disk."""

    def find(self, root: Path) -> Path | None:
        return find_config(root)

    def read(self, path: Path) -> RawConfig:
        return read_config(path)


def find_config(root: Path) -> Path | None:
    """The import-linter config file ``lint-imports`` would use when run in ``root``."""
    for name in SEARCH_ORDER:
        candidate = root / name
        if candidate.is_file() and _read(candidate) is not None:
            return candidate
    return None


def read_config(path: Path) -> RawConfig:
    """Session and contract options of ``path``; ``ConfigError`` when it has none."""
    if not path.is_file():
        raise ConfigError("import-linter config file not found", where=str(path))
    config = _read(path)
    if config is None:
        table = "[tool.importlinter]" if path.suffix == ".toml" else "[importlinter]"
        raise ConfigError(
            f"no {table} section", where=str(path), hint="point --config at an import-linter config"
        )
    if not config.contracts:
        raise ConfigError(
            "no contracts found",
            where=str(path),
            hint="add [importlinter:contract:<id>] sections (INI) "
            "or a [[tool.importlinter.contracts]] array (TOML)",
        )
    ids = [c.options.get("id") for c in config.contracts if c.options.get("id") is not None]
    for contract_id in ids:
        if ":" in str(contract_id):
            raise ConfigError(
                f"contract id '{contract_id}' may not contain a colon", where=str(path)
            )
    duplicated = sorted({str(i) for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ConfigError(
            f"more than one contract has the id '{duplicated[0]}'", where=str(path),
            hint="contract ids must be unique within a file",
        )  # fmt: skip
    return config


def _read(path: Path) -> RawConfig | None:
    text = path.read_text(encoding="utf-8")
    return _read_toml(path, text) if path.suffix == ".toml" else _read_ini(path, text)


def _read_ini(path: Path, text: str) -> RawConfig | None:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as exc:
        raise ConfigError(f"invalid INI: {exc.message.splitlines()[0]}", where=str(path)) from exc
    if SECTION not in parser.sections():
        return None
    headers = {
        match.group(1).strip(): text.count("\n", 0, match.start()) + 1
        for match in re.finditer(r"^\[([^\]\n]+)\]", text, re.MULTILINE)
    }
    contracts = []
    for section in parser.sections():
        if section.startswith(f"{SECTION}:"):
            options: dict[str, Any] = {"id": section.split(":")[-1]}
            options.update(_clean(dict(parser[section])))
            contracts.append(RawContract(options, headers.get(section)))
    return RawConfig(path, _clean(dict(parser[SECTION])), contracts)


def _clean(section: dict[str, str]) -> dict[str, Any]:
    # import-linter's rule: a value spanning lines is a list of its lines.
    return {k: (v.strip().split("\n") if "\n" in v else v) for k, v in section.items()}


def _read_toml(path: Path, text: str) -> RawConfig | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", where=str(path)) from exc
    session = dict(data.get("tool", {}).get(SECTION, {}))
    if not session:
        return None
    raw_contracts = session.pop("contracts", [])
    if not isinstance(raw_contracts, list) or not all(isinstance(c, dict) for c in raw_contracts):
        raise ConfigError("tool.importlinter.contracts must be an array of tables", where=str(path))
    return RawConfig(
        path,
        _normalize_booleans(session),
        [RawContract(_normalize_booleans(dict(c))) for c in raw_contracts],
    )


def _normalize_booleans(data: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, bool) else v for k, v in data.items()}
