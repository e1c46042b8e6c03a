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
from dataclasses import astuple, dataclass, replace
from typing import TYPE_CHECKING, NamedTuple, Protocol

from mir.boundaries.findings import Finding
from mir.boundaries.report import (
    BaselineEntry,
    LintReport,
    LintStats,
    apply_baseline,
    entries_for,
    merged,
    split_unchecked,
)
from mir.errors import MirUserError

if TYPE_CHECKING:  # the model, rules, parser and settings (pydantic) load only when needed
    from mir.boundaries.model import IntentInfo, LintModel
    from mir.boundaries.parsing import Parsed, ParseJob
    from mir.boundaries.settings import LintSettings


class SourceFile(NamedTuple):
    """A tuple, not a dataclass: a run builds one per file before it can do anything."""

    path: str  # relative to the project root, POSIX
    module: str
    is_package: bool
    signature: tuple[int, ...]  # mir.storage.identity: a cheap "unchanged?" check


@dataclass(frozen=True)
class CapabilityDir:
    name: str
    path: str
    has_init: bool
    intent_path: str | None = None  # the CLAUDE.md, when there is one
    markdown_bytes: int = 0  # every .md file in the folder (the intent doc included)


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
    def digest_for(self, path: str, signature: tuple[int, ...]) -> str | None: ...

    def remember(self, path: str, signature: tuple[int, ...], digest: str) -> None: ...

    def get(self, key: str) -> Parsed | None: ...

    def put(self, key: str, parsed: Parsed) -> None: ...

    def result(self, key: str) -> list[tuple] | None: ...

    def store_result(self, key: str, findings: list[tuple]) -> None: ...

    def mark_inputs(self, inputs: str, key: str) -> None: ...

    def save(self) -> None: ...


class BaselineStore(Protocol):
    def load(self) -> list[BaselineEntry]: ...

    def write(self, entries: list[BaselineEntry]) -> None: ...

    @property
    def location(self) -> str: ...


Parser = Callable[[list["ParseJob"]], list["Parsed"]]


def content_key(source: bytes) -> str:
    return hashlib.blake2b(source, digest_size=16).hexdigest()


def digest_files(
    files: list[SourceFile], source: ProjectSource, cache: ParseCache
) -> tuple[list[str], dict[str, bytes]]:
    """Content digest of every file: from the cache when its stat is unchanged, else by
    reading it (the bytes read are kept for parsing)."""
    digests: list[str] = []
    read: dict[str, bytes] = {}
    for file in files:
        digest = cache.digest_for(file.path, file.signature)
        if digest is None:
            data = read[file.path] = source.read(file.path)
            digest = content_key(data)
            cache.remember(file.path, file.signature, digest)
        digests.append(digest)
    return digests, read


def parse_files(
    files: list[SourceFile],
    digests: list[str],
    read: dict[str, bytes],
    source: ProjectSource,
    cache: ParseCache,
    parse: Parser,
    export_modules: set[str],
    check_syntax: bool,
    syntax_tag: str = "python",
) -> tuple[dict[str, Parsed], int]:
    """Parsed result per module, from the cache where the content is known; returns the
    number of files actually parsed. ``syntax_tag`` names the syntax checker ``parse``
    uses: results of different checkers never share a cache entry."""
    from mir.boundaries.parsing import ParseJob

    results: dict[str, Parsed] = {}
    jobs: list[ParseJob] = []
    keys: list[str] = []
    for file, digest in zip(files, digests, strict=True):
        key = f"{digest}:{file.module}:{int(file.is_package)}:{syntax_tag if check_syntax else '-'}"
        hit = cache.get(key)
        if hit is not None:
            results[file.module] = hit
            continue
        data = read.get(file.path)
        if data is None:
            data = source.read(file.path)
        wants_exports = file.module in export_modules
        jobs.append(
            ParseJob(file.path, file.module, file.is_package, wants_exports, data, check_syntax)
        )
        keys.append(key)
    for job, key, parsed in zip(jobs, keys, parse(jobs) if jobs else [], strict=True):
        cache.put(key, parsed)
        results[job.module] = parsed
    return results, len(jobs)


def inputs_key(layout: Layout, digests: list[str], source: ProjectSource) -> str:
    """Digest of the tree the rules see: every file's name and content digest, every
    capability folder and its intent doc's bytes, the first-party top-level names."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(repr((layout.base, sorted(layout.local_roots))).encode())
    listing = "".join(
        [
            f"{file.path}|{file.module}|{file.is_package}|{digest}\n"
            for file, digest in zip(layout.files, digests, strict=True)
        ]
    )
    hasher.update(listing.encode())
    for cap in layout.capabilities:
        hasher.update(
            f"{cap.name}|{cap.path}|{cap.has_init}|{cap.intent_path}|{cap.markdown_bytes}\n".encode()
        )
        if cap.intent_path is not None:
            hasher.update(source.read(cap.intent_path))
    return hasher.hexdigest()


def run_key(
    inputs: str, settings: LintSettings, shared: tuple[str, ...], syntax_tag: str = "python"
) -> str:
    """Digest of every input of the rules: when it is unchanged, so are the findings."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(settings.model_dump_json().encode())
    hasher.update(repr((shared, inputs, syntax_tag)).encode())
    return hasher.hexdigest()


def build_model(
    layout: Layout,
    parsed: dict[str, Parsed],
    source: ProjectSource,
    settings: LintSettings,
    shared: Iterable[str],
) -> LintModel:
    from mir.boundaries.model import Capability, LintModel, ParseProblem, Ref, SourceModule

    modules = {}
    for file in layout.files:
        result = parsed[file.module]
        modules[file.module] = SourceModule(
            name=file.module,
            path=file.path,
            is_package=file.is_package,
            imports=tuple(map(Ref._make, result.imports)),
            problem=None if result.problem is None else ParseProblem(*result.problem),
            exports=result.exports,
            ignores=result.ignores,
            size=file.signature[2],  # identity(): (dev, ino, size, mtime_ns, ctime_ns)
        )
    capabilities = {
        cap.name: Capability(
            name=cap.name,
            module=f"{layout.base}.{cap.name}",
            path=cap.path,
            intent=source.intent(cap),
            has_init=cap.has_init,
            markdown_bytes=cap.markdown_bytes,
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
    parse: Parser | None = None,
    extra_findings: Iterable[Finding] = (),
    syntax_tag: str = "python",
) -> LintReport:
    """Lint the project ``source`` describes; findings are data, never exceptions.
    ``syntax_tag`` names the syntax checker of ``parse`` (part of every cache key)."""
    started = time.perf_counter()
    shared = tuple(shared)
    layout = source.layout(settings)
    digests, read = digest_files(layout.files, source, cache)
    inputs = inputs_key(layout, digests, source)
    key = run_key(inputs, settings, shared, syntax_tag)
    cache.mark_inputs(inputs, key)
    rows = cache.result(key)
    parsed_count = 0
    if rows is None and not layout.files and not layout.capabilities:
        rows = []  # nothing to check (a project checked by its contracts only): no rules
        cache.store_result(key, rows)
    if rows is None:
        if parse is None:
            from mir.boundaries.parsing import parse_jobs as parse
        exports = {f"{layout.base}.{cap.name}" for cap in layout.capabilities}
        parsed, parsed_count = parse_files(
            layout.files,
            digests,
            read,
            source,
            cache,
            parse,
            exports,
            settings.syntax_errors,
            syntax_tag,
        )
        from mir.boundaries.rules import run_rules

        model = build_model(layout, parsed, source, settings, shared)
        rows = [astuple(finding) for finding in run_rules(model)]
        cache.store_result(key, rows)
    cache.save()
    return finish_report(
        rows,
        extra_findings,
        baseline,
        update_baseline,
        LintStats(
            files=len(layout.files),
            capabilities=len(layout.capabilities),
            parsed=parsed_count,
            cached=len(layout.files) - parsed_count,
        ),
        started,
    )


def finish_report(
    rows: list[tuple],
    extra_findings: Iterable[Finding],
    baseline: BaselineStore | None,
    update_baseline: bool,
    stats: LintStats,
    started: float,
) -> LintReport:
    """Findings (rows in ``Finding`` field order) sorted, split by the baseline; shared
    by a full run and by a replay of cached findings."""
    own = [Finding(*row) for row in rows]
    findings = sorted([*own, *extra_findings], key=lambda f: f.sort_key)
    written = False
    if baseline is not None and update_baseline:
        try:
            before = baseline.load()
        except MirUserError:
            before = []  # no baseline yet (or not one): this run writes the first
        _, unchecked = split_unchecked(apply_baseline(findings, before)[2], findings)
        baseline.write(merged(entries_for(findings), unchecked))
        written = True
    known = baseline.load() if baseline is not None else None
    new, baselined, stale = apply_baseline(findings, known)
    stale, unchecked = split_unchecked(stale, findings)
    return LintReport(
        findings=tuple(new),
        baselined=tuple(baselined),
        stale=tuple(stale),
        unchecked=tuple(unchecked),
        stats=replace(stats, seconds=time.perf_counter() - started),
        baseline_path=baseline.location if baseline is not None else None,
        baseline_written=written,
    )
