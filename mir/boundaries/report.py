"""The result of one lint run, and the baseline that lets a team adopt rules gradually.

A baseline entry is keyed on (code, path, importer, imported) with a count, never on
line numbers, so edits above a known violation do not turn it into a new one. Findings
matching an entry are *baselined* (reported, not failing); entries no finding matched
any more are *stale*: the violation was fixed and ``--update-baseline`` shrinks the file.
An entry in a file or capability this run could not check (the file does not parse, the
capability's intent doc is missing or invalid) is *unchecked*, never stale: nothing says
it was fixed, and ``--update-baseline`` keeps it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mir.boundaries.findings import Finding

BaselineKey = tuple[str, str, str | None, str | None]


def baseline_key(finding: Finding) -> BaselineKey:
    return (finding.code, finding.path, finding.importer, finding.imported)


@dataclass(frozen=True)
class BaselineEntry:
    code: str
    path: str
    importer: str | None
    imported: str | None
    count: int = 1

    @property
    def key(self) -> BaselineKey:
        return (self.code, self.path, self.importer, self.imported)

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "path": self.path,
            "importer": self.importer,
            "imported": self.imported,
            "count": self.count,
        }


def entries_for(findings: list[Finding]) -> list[BaselineEntry]:
    counts = Counter(baseline_key(finding) for finding in findings)
    return [BaselineEntry(*key, count=count) for key, count in sorted(counts.items(), key=str)]


@dataclass(frozen=True)
class UncheckedEntry:
    """A baseline entry no finding matched, in a file or capability that was not checked."""

    entry: BaselineEntry
    why: str  # "capabilities/refunds/CLAUDE.md is invalid"

    def as_dict(self) -> dict[str, object]:
        return {**self.entry.as_dict(), "why": self.why}


# Findings that stop the other rules from checking a capability (its intent doc) or a
# file (it does not parse).
_UNCHECKED = {"MIR201": "is missing", "MIR202": "is invalid", "MIR301": "does not parse"}


def split_unchecked(
    stale: list[BaselineEntry], findings: list[Finding]
) -> tuple[list[BaselineEntry], list[UncheckedEntry]]:
    """(stale, unchecked): the entries whose file or capability could not be checked."""
    scopes: dict[str, str] = {}
    for finding in findings:
        if finding.code in _UNCHECKED:
            why = f"{finding.path} {_UNCHECKED[finding.code]}"
            scope = finding.path if finding.code == "MIR301" else finding.path.rpartition("/")[0]
            scopes.setdefault(scope, why)

    def why(entry: BaselineEntry) -> str | None:
        for scope, reason in scopes.items():
            if entry.path == scope or entry.path.startswith(f"{scope}/"):
                return reason
        return None

    fixed = [entry for entry in stale if why(entry) is None]
    unchecked = [UncheckedEntry(e, reason) for e in stale if (reason := why(e)) is not None]
    return fixed, unchecked


def merged(entries: list[BaselineEntry], kept: list[UncheckedEntry]) -> list[BaselineEntry]:
    """The entries to write, with the unchecked ones kept (counts added per key)."""
    counts = Counter({entry.key: entry.count for entry in entries})
    for item in kept:
        counts[item.entry.key] += item.entry.count
    return [BaselineEntry(*key, count=count) for key, count in sorted(counts.items(), key=str)]


@dataclass(frozen=True)
class LintStats:
    files: int = 0
    capabilities: int = 0
    parsed: int = 0  # cache misses: files read and parsed in this run
    cached: int = 0  # cache hits
    seconds: float = 0.0


@dataclass(frozen=True)
class LintReport:
    """Findings of one run, split by the baseline (if any)."""

    findings: tuple[Finding, ...]  # new: these fail the run
    baselined: tuple[Finding, ...] = ()
    stale: tuple[BaselineEntry, ...] = ()
    unchecked: tuple[UncheckedEntry, ...] = ()
    stats: LintStats = field(default_factory=LintStats)
    baseline_path: str | None = None
    baseline_written: bool = False

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0

    def summary(self) -> dict[str, object]:
        by_code = Counter(finding.code for finding in self.findings)
        return {
            "findings": len(self.findings),
            "baselined": len(self.baselined),
            "stale": len(self.stale),
            "unchecked": len(self.unchecked),
            "by_code": dict(sorted(by_code.items())),
            "files": self.stats.files,
            "capabilities": self.stats.capabilities,
            "parsed": self.stats.parsed,
            "cached": self.stats.cached,
        }


def apply_baseline(
    findings: list[Finding], baseline: list[BaselineEntry] | None
) -> tuple[list[Finding], list[Finding], list[BaselineEntry]]:
    """(new, baselined, stale) — each baseline entry absorbs up to ``count`` findings."""
    if baseline is None:
        return findings, [], []
    budget = {entry.key: entry.count for entry in baseline}
    new: list[Finding] = []
    known: list[Finding] = []
    for finding in findings:
        key = baseline_key(finding)
        if budget.get(key, 0) > 0:
            budget[key] -= 1
            known.append(finding)
        else:
            new.append(finding)
    stale = [
        BaselineEntry(*entry.key, count=budget[entry.key])
        for entry in baseline
        if budget.get(entry.key, 0) > 0
    ]
    return new, known, stale
