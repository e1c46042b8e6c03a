"""Use case: evaluate an import-linter config, as verdicts and as findings.

The flow is ``lint-imports``'s: validate the session and every contract first (a bad
one is a ``ConfigError``, like import-linter's "could not run"), build one graph, check
each contract on its own copy. The graph comes through the ``GraphBuilder`` port: in
production it is built from source text, never by importing the user's packages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from mir.boundaries import Finding
from mir.errors import ConfigError
from mir.importlinter.domain.checks import check_contract
from mir.importlinter.domain.contracts import Contract, Session
from mir.importlinter.domain.graph import SourceGraph
from mir.importlinter.domain.options import OptionsError, RawConfig, parse_contract, parse_session
from mir.importlinter.domain.verdicts import ContractCheckError, ContractVerdict, Violation

CODES = {
    "layers": "IL001",
    "forbidden": "IL002",
    "independence": "IL003",
    "acyclic_siblings": "IL004",
    "protected": "IL005",
    "private_modules": "IL006",
}


class ConfigSource(Protocol):
    def find(self, root: Path) -> Path | None:
        """The config ``lint-imports`` would pick in ``root``, if any."""
        ...

    def read(self, path: Path) -> RawConfig:
        """Raw options of ``path``; ``ConfigError`` when it holds no contracts."""
        ...


class GraphBuilder(Protocol):
    def build(self, session: Session, search_dirs: list[Path]) -> SourceGraph:
        """The import graph of the session's root packages, looked for in ``search_dirs``."""
        ...


@dataclass(frozen=True)
class ContractResult:
    """The verdict on one contract, in the order the config lists them."""

    name: str
    type: str
    kept: bool
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def locate_config(root: Path, config: Path | None, source: ConfigSource) -> RawConfig | None:
    """The explicit ``config``, else the one found in ``root``, else None."""
    path = config if config is not None else source.find(root)
    return None if path is None else source.read(path)


def evaluate_config(root: Path, raw: RawConfig, builder: GraphBuilder) -> list[ContractResult]:
    """Kept/broken verdict per contract of ``raw``; ``ConfigError`` names file + contract."""
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
    # Root packages are folders next to the config file or under src/ (src-layout).
    config_dir = raw.path.resolve().parent
    search_dirs = list(dict.fromkeys([config_dir, config_dir / "src", root, root / "src"]))
    scanned = builder.build(session, search_dirs)
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


def _result(verdict: ContractVerdict, scanned: SourceGraph, root: Path) -> ContractResult:
    contract = verdict.contract
    findings = [_finding(contract, v, scanned, root) for v in verdict.violations]
    return ContractResult(
        contract.name, contract.type, verdict.kept, findings, list(verdict.warnings)
    )


def _finding(contract: Contract, violation: Violation, scanned: SourceGraph, root: Path) -> Finding:
    # Point at the first direct import of the chain: that is the line to change (or to
    # list in ignore_imports). Undeclared-module findings point at the module itself.
    first = violation.chain[0] if violation.chain else None
    module = first.importer if first else violation.importer
    path = scanned.files.get(module)
    while path is None and "." in module:  # a namespace folder has no file: use its parent's
        module = module.rpartition(".")[0]
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
