"""import-linter compatibility: read ``.importlinter`` / ``setup.cfg`` / ``pyproject.toml``
contracts and give the same kept/broken verdicts as ``lint-imports`` (public interface).

Names resolve lazily (PEP 562): replaying cached verdicts (``cached_contracts``) must
not import the contract models (pydantic) or the scanner.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.importlinter.application import ContractResult
    from mir.importlinter.catalogue import rule_catalogue, rule_catalogue_json, rule_doc
    from mir.importlinter.domain.rules import RULE_DOCS
    from mir.importlinter.entrypoints import cached_contracts, check_contracts, evaluate
    from mir.importlinter.linting import (
        default_root,
        lint_or_replay,
        lint_project,
        replay_project,
        watch_line,
        watch_project,
    )

_WHERE = {
    "ContractResult": "application",
    "RULE_DOCS": "domain.rules",
    "cached_contracts": "entrypoints",
    "check_contracts": "entrypoints",
    "evaluate": "entrypoints",
    "rule_catalogue": "catalogue",
    "rule_catalogue_json": "catalogue",
    "rule_doc": "catalogue",
    "default_root": "linting",
    "lint_project": "linting",
    "replay_project": "linting",
    "lint_or_replay": "linting",
    "watch_line": "linting",
    "watch_project": "linting",
}

__all__ = [
    "RULE_DOCS",
    "ContractResult",
    "cached_contracts",
    "check_contracts",
    "default_root",
    "evaluate",
    "lint_or_replay",
    "lint_project",
    "replay_project",
    "rule_catalogue",
    "rule_catalogue_json",
    "rule_doc",
    "watch_line",
    "watch_project",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"mir.importlinter.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'mir.importlinter' has no attribute {name!r}")
