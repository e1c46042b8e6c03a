"""import-linter compatibility: read ``.importlinter`` / ``setup.cfg`` / ``pyproject.toml``
contracts and give the same kept/broken verdicts as ``lint-imports`` (public interface)."""

from mir.importlinter.application import ContractResult
from mir.importlinter.domain.rules import RULE_DOCS
from mir.importlinter.entrypoints import check_contracts, evaluate

__all__ = ["RULE_DOCS", "ContractResult", "check_contracts", "evaluate"]
