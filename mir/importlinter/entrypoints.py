"""Composition: the use cases wired to the production adapters.

Tests build ``application.evaluate_config`` with fakes; ``mir lint boundaries`` calls
``check_contracts``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mir.boundaries import Finding, extract_imports
from mir.errors import ConfigError
from mir.importlinter.adapters.config import ConfigFiles
from mir.importlinter.adapters.scanning import SourceScanner
from mir.importlinter.application import ContractResult, evaluate_config, locate_config


def evaluate(root: Path, config: Path | None = None) -> list[ContractResult]:
    """Kept/broken verdict per contract of ``config`` (or of the config found in ``root``).

    Raises ``ConfigError`` when there is no config, or a bad one (naming file + contract).
    """
    raw = locate_config(root, config, ConfigFiles())
    if raw is None:
        raise ConfigError(
            "no import-linter configuration found",
            where=str(root),
            hint="add [importlinter] to setup.cfg or .importlinter, "
            "or [tool.importlinter] to pyproject.toml",
        )
    return evaluate_config(root, raw, SourceScanner(extract_imports))


def check_contracts(
    root: Path, config: Path | None, warn: Callable[[str], None] | None = None
) -> list[Finding] | None:
    """Findings of every broken contract; None when no config is given or found in ``root``.

    ``warn`` receives each contract's warnings (e.g. an ``ignore_imports`` entry that
    matches nothing, with ``unmatched_ignore_imports_alerting = warn``), prefixed with
    the contract's name, as ``lint-imports`` prints them.
    """
    raw = locate_config(root, config, ConfigFiles())
    if raw is None:
        return None
    results = evaluate_config(root, raw, SourceScanner(extract_imports))
    if warn is not None:
        for result in results:
            for message in result.warnings:
                warn(f"contract '{result.name}': {message}")
    return [finding for result in results for finding in result.findings]
