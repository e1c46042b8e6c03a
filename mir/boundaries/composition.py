"""``lint_boundaries``: the production wiring of the lint use case (files, cache, pool).

This module is the composition root of the capability (adapters layer): it is the only
place that picks real adapters, so ``application.run_lint`` stays testable with fakes.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from mir.boundaries.application import Parser, run_lint
from mir.boundaries.baseline_file import JsonBaselineFile
from mir.boundaries.cache import FileParseCache
from mir.boundaries.files import FileSystemSource
from mir.boundaries.findings import Finding
from mir.boundaries.parsing import Parsed, ParseJob, parse_jobs, syntax_problems
from mir.boundaries.replay import replay_config
from mir.boundaries.report import LintReport
from mir.boundaries.ruff_syntax import (
    RuffError,
    RuffSyntaxCheck,
    checker_tag,
    ruff_binary,
    ruff_can_check,
)
from mir.boundaries.settings import LintOptions, LintSettings
from mir.errors import ConfigError, UsageError
from mir.project import MirSettings, Project, load_project_at

# Below this many cache misses a process pool costs more (fork + pickling) than it saves.
POOL_THRESHOLD = 400


def load_lint_project(root: Path) -> tuple[Project, LintSettings]:
    """The project at ``root`` and its ``[tool.mir.lint]``; defaults without ``[tool.mir]``."""
    root = root.resolve()
    if not root.is_dir():
        raise UsageError(f"not a folder: {root}", hint="pass the project folder as ROOT")
    pyproject = root / "pyproject.toml"
    project = Project(root=root, pyproject=pyproject, settings=MirSettings())
    if pyproject.is_file():
        try:
            project = load_project_at(root)
        except ConfigError as exc:
            if not exc.message.startswith("no [tool.mir]"):
                raise
    return project, project.section("lint", LintSettings)


def _overlapping_parser(workers: int) -> Parser:
    """Parse cache misses with most syntax checks (the expensive half: a full C parse
    per file) in ``workers - 1`` worker processes while this process scans imports, then
    checks the rest itself; small batches stay in-process (a fork costs more)."""

    def parse(jobs: list[ParseJob]) -> list[Parsed]:
        checked = [job for job in jobs if job.check_syntax]
        if len(checked) < POOL_THRESHOLD or workers < 2:
            return parse_jobs(jobs)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork: workers inherit the already-imported parser (no re-import cost)
        context = multiprocessing.get_context("fork")
        pool_size = workers - 1
        size = -(-len(checked) // (pool_size * 8))
        batches = [
            [(job.path, job.source) for job in checked[i : i + size]]
            for i in range(0, len(checked), size)
        ]
        # this process scans every file (~1/3 of a syntax check's cost), so it also takes
        # the last quarter of the syntax batches to finish about when the workers do
        mine = len(batches) // (4 * pool_size)
        theirs, ours = batches[: len(batches) - mine], batches[len(batches) - mine :]
        with ProcessPoolExecutor(max_workers=pool_size, mp_context=context) as pool:
            futures = [pool.submit(syntax_problems, batch) for batch in theirs]
            scanned = parse_jobs([replace(job, check_syntax=False) for job in jobs])
            results = [syntax_problems(batch) for batch in ours]
            results = [future.result() for future in futures] + results
        problems = {
            path: problem
            for batch, found in zip([*theirs, *ours], results, strict=True)
            for (path, _), problem in zip(batch, found, strict=True)
        }
        return _with_problems(jobs, scanned, problems)

    return parse


def _with_problems(
    jobs: list[ParseJob], scanned: list[Parsed], problems: dict[str, tuple[int, int, str]]
) -> list[Parsed]:
    """The scan results with the syntax problems a separate check found by path (a file
    that does not parse exports nothing)."""
    merged = []
    for job, result in zip(jobs, scanned, strict=True):
        problem = result.problem or problems.get(job.path)
        exports = None if problem is not None else result.exports
        merged.append(Parsed(result.imports, problem, exports, result.ignores))
    return merged


def syntax_checker(settings: LintSettings) -> tuple[str | None, str]:
    """``(ruff binary or None for CPython, tag)`` for ``[tool.mir.lint] syntax_checker``."""
    if not settings.syntax_errors or settings.syntax_checker == "python":
        return None, "python"
    binary = ruff_binary()
    if binary is None:
        if settings.syntax_checker == "ruff":
            raise ConfigError(
                'syntax_checker = "ruff" but the ruff package is not installed',
                where="[tool.mir.lint]",
                hint='pip install ruff, or set syntax_checker = "auto"',
            )
        return None, "python"
    return binary, checker_tag(binary)


def _ruff_parser(binary: str, root: Path, fallback: Parser) -> Parser:
    """Scan imports here while ruff checks the syntax on the other cores; files ruff
    cannot read like CPython (another encoding, NUL bytes) are checked by CPython. If
    ruff fails to run, every file is checked by ``fallback`` instead."""

    def parse(jobs: list[ParseJob]) -> list[Parsed]:
        native = [job for job in jobs if job.check_syntax and ruff_can_check(job.source)]
        if not native:
            return parse_jobs(jobs)
        try:
            check = RuffSyntaxCheck(binary, root, [job.path for job in native]).start()
        except RuffError:
            return fallback(jobs)
        sent = {job.path for job in native}
        try:
            scanned = parse_jobs(
                [replace(job, check_syntax=False) if job.path in sent else job for job in jobs]
            )
        except BaseException:
            check.close()
            raise
        try:
            problems = check.problems()
        except RuffError:
            return fallback(jobs)
        return _with_problems(jobs, scanned, problems)

    return parse


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """A run allocates ~100,000 small tuples and frees nearly all of them by reference
    counting; the cycle collector would re-scan the growing heap again and again for
    nothing (measured on the bench tree: building the import edges takes 78 ms with it,
    31 ms without; a cold run ~10% less)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def lint_boundaries(
    root: Path,
    options: LintOptions | None = None,
    extra_findings: Iterable[Finding] = (),
    cache: FileParseCache | None = None,
    require_capabilities: bool = True,
) -> LintReport:
    """Lint the project in ``root``. ``extra_findings`` (e.g. import-linter contracts)
    are merged before the baseline is applied; ``cache`` lets ``--watch`` keep one
    in-memory cache across runs; ``require_capabilities=False`` lints an empty tree when
    the capabilities folder is missing (a project checked only by its contracts)."""
    options = options or LintOptions()
    project, settings = load_lint_project(root)
    if cache is None:
        folder = None
        if options.use_cache:
            folder = options.cache_dir or project.root / settings.cache_dir
        cache = FileParseCache(folder)
    binary, tag = syntax_checker(settings)
    cache.config = replay_config(
        project.pyproject, project.settings.capabilities, settings, require_capabilities, tag
    )
    baseline_path = options.baseline or (
        project.root / settings.baseline if settings.baseline else None
    )
    if options.update_baseline and baseline_path is None:
        raise UsageError(
            "--update-baseline needs a baseline file",
            hint="pass --baseline FILE or set [tool.mir.lint] baseline",
        )
    baseline = None
    if baseline_path is not None:
        shown = baseline_path.as_posix()
        baseline = JsonBaselineFile(baseline_path, shown)
        if not options.update_baseline:
            baseline.ensure_exists()  # before the work, not after it
    workers = options.workers if options.workers is not None else (os.cpu_count() or 1)
    parse = _overlapping_parser(workers)
    if binary is not None:
        parse = _ruff_parser(binary, project.root, parse)
    with _without_cycle_collection():
        return run_lint(
            settings,
            project.settings.shared,
            FileSystemSource(project.root, project.settings.capabilities, require_capabilities),
            cache,
            baseline,
            update_baseline=options.update_baseline,
            parse=parse,
            extra_findings=extra_findings,
            syntax_tag=tag,
        )
