"""Use cases: evaluate a project's import-linter contracts, as verdicts or as findings.

The flow is ``lint-imports``'s: read the config, validate every contract (a bad one is a
``ConfigError``, like import-linter's "could not run"), build one graph, check each
contract on its own copy. What differs is how the graph is built: from source text
(``adapters.scanning``), never by importing the user's packages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mir.boundaries import Finding
from mir.errors import ConfigError
from mir.importlinter.adapters.config import RawConfig, find_config, read_config
from mir.importlinter.adapters.scanning import Extractor, ScannedGraph, build_graph
from mir.importlinter.domain.checks import check_contract
from mir.importlinter.domain.contracts import Contract
from mir.importlinter.domain.options import OptionsError, parse_contract, parse_session
from mir.importlinter.domain.verdicts import ContractCheckError, ContractVerdict, Violation

CODES = {
    "layers": "IL001",
    "forbidden": "IL002",
    "independence": "IL003",
    "acyclic_siblings": "IL004",
}


@dataclass(frozen=True)
class ContractResult:
    """The verdict on one contract, in the order the config lists them."""

    name: str
    type: str
    kept: bool
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def evaluate(
    root: Path, config: Path | None = None, *, extract: Extractor | None = None
) -> list[ContractResult]:
    """Kept/broken verdict per contract of ``config`` (or the one found in ``root``).

    Raises ``ConfigError`` for a missing or invalid config, naming the file and contract.
    """
    path = config if config is not None else find_config(root)
    if path is None:
        raise ConfigError(
            "no import-linter configuration found",
            where=str(root),
            hint="add [importlinter] to setup.cfg or .importlinter, "
            "or [tool.importlinter] to pyproject.toml",
        )
    return _evaluate(root, read_config(path), extract)


def check_contracts(root: Path, config: Path | None) -> list[Finding] | None:
    """Findings for every broken contract; None when no config is given or found."""
    if config is None and find_config(root) is None:
        return None
    results = evaluate(root, config)
    return [finding for result in results for finding in result.findings]


def _evaluate(root: Path, raw: RawConfig, extract: Extractor | None) -> list[ContractResult]:
    try:
        session = parse_session(raw.session)
    except OptionsError as exc:
        raise ConfigError(f"[importlinter]: {exc.message}", where=str(raw.path)) from exc
    contracts: list[tuple[Contract, str]] = []
    for item in raw.contracts:
        try:
            contracts.append((parse_contract(item.options), raw.where(item)))
        except OptionsError as exc:
            raise ConfigError(
                f"contract '{exc.contract}': {exc.message}", where=raw.where(item)
            ) from exc
    config_dir = raw.path.resolve().parent
    search_dirs = list(dict.fromkeys([config_dir, config_dir / "src", root, root / "src"]))
    scanned = build_graph(session, search_dirs, extract or _default_extractor())
    results = []
    for contract, where in contracts:
        try:
            verdict = check_contract(contract, scanned.graph, session)
        except ContractCheckError as exc:
            raise ConfigError(
                f"contract '{contract.name}': {exc}",
                where=where,
                hint="lint-imports stops on this too; fix the contract or the code it names",
            ) from exc
        results.append(_result(verdict, scanned, root))
    return results


def _default_extractor() -> Extractor:
    from mir.boundaries import extract_imports

    return extract_imports


def _result(verdict: ContractVerdict, scanned: ScannedGraph, root: Path) -> ContractResult:
    contract = verdict.contract
    findings = [_finding(contract, v, scanned, root) for v in verdict.violations]
    return ContractResult(
        contract.name, contract.type, verdict.kept, findings, list(verdict.warnings)
    )


def _finding(
    contract: Contract, violation: Violation, scanned: ScannedGraph, root: Path
) -> Finding:
    # Point at the first direct import of the chain: that is the line to change (or to
    # list in ignore_imports). Undeclared-module findings point at the module itself.
    first = violation.chain[0] if violation.chain else None
    module = first.importer if first else violation.importer
    path = scanned.files.get(module)
    return Finding(
        code=CODES[contract.type],
        path=_relative(path, root) if path else "",
        line=first.lines[0] if first and first.lines else 1,
        column=0,
        message=f"{contract.name}: {violation.message}",
        rule=f"importlinter-{contract.type.replace('_', '-')}",
        importer=violation.importer,
        imported=violation.imported,
        contract=contract.name,
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
