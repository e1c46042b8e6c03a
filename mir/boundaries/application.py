"""The lint use case, over two ports: the project's files and the parse cache.

``run_lint`` never touches the file system itself: ``ProjectSource`` lists and reads
files, ``ParseCache`` remembers what a file's content parsed to, and ``parse`` turns
cache misses into results (serially here; a process pool in the composition). Tests
drive it with in-memory fakes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from mir.boundaries.findings import Finding
from mir.boundaries.model import Capability, IntentInfo, LintModel, SourceModule
from mir.boundaries.parsing import Parsed, ParseJob, parse_jobs
from mir.boundaries.report import (
    BaselineEntry,
    LintReport,
    LintStats,
    apply_baseline,
    entries_for,
)
from mir.boundaries.rules import run_rules
from mir.boundaries.settings import LintSettings


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the project root, POSIX
    module: str
    is_package: bool
    signature: tuple[int, int]  # (mtime_ns, size): a cheap "unchanged?" check


@dataclass(frozen=True)
class CapabilityDir:
    name: str
    path: str
    has_init: bool


@dataclass(frozen=True)
class Layout:
    """What discovery found: the capabilities root and every file to lint."""

    base: str
    files: list[SourceFile]
    capabilities: list[CapabilityDir]
    local_roots: frozenset[str]


class ProjectSource(Protocol):
    def layout(self, settings: LintSettings) -> Layout: ...

    def read(self, path: str) -> bytes: ...

    def intent(self, capability: CapabilityDir) -> IntentInfo | None: ...


class ParseCache(Protocol):
    def digest_for(self, path: str, signature: tuple[int, int]) -> str | None: ...

    def remember(self, path: str, signature: tuple[int, int], digest: str) -> None: ...

    def get(self, key: str) -> Parsed | None: ...

    def put(self, key: str, parsed: Parsed) -> None: ...

    def save(self) -> None: ...


class BaselineStore(Protocol):
    def load(self) -> list[BaselineEntry] | None: ...

    def write(self, entries: list[BaselineEntry]) -> None: ...

    @property
    def location(self) -> str: ...


Parser = Callable[[list[ParseJob]], list[Parsed]]


def content_key(source: bytes) -> str:
    """Cache key: the content plus what the result depends on besides it (the module
    name resolves relative imports)."""
    digest = hashlib.blake2b(source, digest_size=16).hexdigest()
    return digest


def _entry_key(digest: str, file: SourceFile) -> str:
    return f"{digest}:{file.module}:{int(file.is_package)}"


def parse_files(
    files: list[SourceFile],
    source: ProjectSource,
    cache: ParseCache,
    parse: Parser,
    export_modules: set[str],
) -> tuple[dict[str, Parsed], int]:
    """Parsed result per module, from the cache where the content is known; returns the
    number of files actually parsed."""
    results: dict[str, Parsed] = {}
    jobs: list[ParseJob] = []
    keys: list[str] = []
    for file in files:
        digest = cache.digest_for(file.path, file.signature)
        data = None
        if digest is None:
            data = source.read(file.path)
            digest = content_key(data)
            cache.remember(file.path, file.signature, digest)
        key = _entry_key(digest, file)
        hit = cache.get(key)
        if hit is not None:
            results[file.module] = hit
            continue
        if data is None:
            data = source.read(file.path)
        jobs.append(
            ParseJob(file.path, file.module, file.is_package, file.module in export_modules, data)
        )
        keys.append(key)
    for job, key, parsed in zip(jobs, keys, parse(jobs) if jobs else [], strict=True):
        cache.put(key, parsed)
        results[job.module] = parsed
    return results, len(jobs)


def build_model(
    layout: Layout,
    parsed: dict[str, Parsed],
    source: ProjectSource,
    settings: LintSettings,
    shared: Iterable[str],
) -> LintModel:
    modules = {
        file.module: SourceModule(
            name=file.module,
            path=file.path,
            is_package=file.is_package,
            imports=parsed[file.module].imports,
            problem=parsed[file.module].problem,
            exports=parsed[file.module].exports,
        )
        for file in layout.files
    }
    capabilities = {
        cap.name: Capability(
            name=cap.name,
            module=f"{layout.base}.{cap.name}",
            path=cap.path,
            intent=source.intent(cap),
            has_init=cap.has_init,
        )
        for cap in layout.capabilities
    }
    return LintModel(
        base=layout.base,
        modules=modules,
        capabilities=capabilities,
        settings=settings,
        shared=tuple(shared),
        local_roots=layout.local_roots,
    )


def run_lint(
    settings: LintSettings,
    shared: Iterable[str],
    source: ProjectSource,
    cache: ParseCache,
    baseline: BaselineStore | None = None,
    *,
    update_baseline: bool = False,
    parse: Parser = parse_jobs,
    extra_findings: Iterable[Finding] = (),
) -> LintReport:
    """Lint the project ``source`` describes; findings are data, never exceptions."""
    started = time.perf_counter()
    layout = source.layout(settings)
    exports = {f"{layout.base}.{cap.name}" for cap in layout.capabilities}
    parsed, parsed_count = parse_files(layout.files, source, cache, parse, exports)
    cache.save()
    model = build_model(layout, parsed, source, settings, shared)
    findings = sorted([*run_rules(model), *extra_findings], key=lambda f: f.sort_key)
    written = False
    if baseline is not None and update_baseline:
        baseline.write(entries_for(findings))
        written = True
    known = baseline.load() if baseline is not None else None
    new, baselined, stale = apply_baseline(findings, known)
    stats = LintStats(
        files=len(layout.files),
        capabilities=len(layout.capabilities),
        parsed=parsed_count,
        cached=len(layout.files) - parsed_count,
        seconds=time.perf_counter() - started,
    )
    return LintReport(
        findings=tuple(new),
        baselined=tuple(baselined),
        stale=tuple(stale),
        stats=stats,
        baseline_path=baseline.location if baseline is not None else None,
        baseline_written=written,
    )
