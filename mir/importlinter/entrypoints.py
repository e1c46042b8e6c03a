"""Composition: the use cases wired to the production adapters.

Tests build ``application.evaluate_config`` with fakes; ``mir lint boundaries`` calls
``cached_contracts``. The adapters and the use case are imported inside the functions:
a replay of cached verdicts needs neither (nor pydantic, which the contracts use).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mir.errors import ConfigError
from mir.importlinter.adapters.result_cache import ContractCache

if TYPE_CHECKING:
    from mir.boundaries import Finding
    from mir.importlinter.application import ContractResult


def evaluate(root: Path, config: Path | None = None) -> list[ContractResult]:
    """Kept/broken verdict per contract of ``config`` (or of the config found in ``root``).

    Raises ``ConfigError`` when there is no config, or a bad one (naming file + contract).
    """
    from mir.boundaries import extract_imports
    from mir.importlinter.adapters.config import ConfigFiles
    from mir.importlinter.adapters.scanning import SourceScanner
    from mir.importlinter.application import evaluate_config, locate_config

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
    root: Path,
    config: Path | None,
    warn: Callable[[str], None] | None = None,
    cache: ContractCache | None = None,
) -> list[Finding] | None:
    """Findings of every broken contract; None when no config is given or found in ``root``.

    ``warn`` receives each contract's warnings (e.g. an ``ignore_imports`` entry that
    matches nothing, with ``unmatched_ignore_imports_alerting = warn``), prefixed with
    the contract's name, as ``lint-imports`` prints them. With ``cache``, the imports of
    a file are extracted only when its content is new, and the verdicts are recorded
    for ``cached_contracts`` to replay.
    """
    from mir.boundaries import extract_imports
    from mir.importlinter.adapters.config import ConfigFiles
    from mir.importlinter.adapters.scanning import SourceScanner
    from mir.importlinter.application import evaluate_config, locate_config

    raw = locate_config(root, config, ConfigFiles())
    if raw is None:
        return None
    scanner = SourceScanner(extract_imports, cache)
    results = evaluate_config(root, raw, scanner)
    warnings = [f"contract '{r.name}': {message}" for r in results for message in r.warnings]
    findings = [finding for result in results for finding in result.findings]
    if cache is not None:
        cache.record(root, config, scanner.search_dirs, scanner.located, findings, warnings)
        cache.save()
    if warn is not None:
        for message in warnings:
            warn(message)
    return findings


def cached_contracts(
    root: Path,
    config: Path | None,
    cache_dir: Path | None,
    warn: Callable[[str], None] | None = None,
    cache: ContractCache | None = None,
) -> list[Finding] | None:
    """``check_contracts`` through the cache in ``cache_dir`` (or ``cache``, one kept
    across ``--watch`` runs; neither: no cache): the last verdicts when no input
    changed (config bytes, root packages, every module's content), else a full check
    that re-extracts only the files whose content is new."""
    if cache is None and cache_dir is not None:
        cache = ContractCache(cache_dir)
    if cache is not None:
        replayed = cache.replay(root, config)
        if replayed is not None:
            findings, warnings = replayed
            if warn is not None:
                for message in warnings:
                    warn(message)
            return findings
    return check_contracts(root, config, warn, cache)
