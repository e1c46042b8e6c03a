"""``--watch``: re-lint on save. One in-memory cache lives across runs, so a save
re-reads and re-parses only the files whose stat changed.

Only a *write* of a file lint reads starts a run: watchdog also reports reads
(``opened``, ``closed_no_write``), and lint reads every file, so reacting to those made
each run trigger the next one (~6 runs a second, a busy core, with no edit at all).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from mir.boundaries.cache import FileParseCache
from mir.boundaries.composition import lint_boundaries, load_lint_project
from mir.boundaries.findings import Finding
from mir.boundaries.report import LintReport
from mir.boundaries.settings import LintOptions
from mir.errors import MirUserError

WRITE_EVENTS = frozenset({"modified", "created", "deleted", "moved"})
READ_NAMES = frozenset(
    {"pyproject.toml", "setup.cfg", ".importlinter", "CLAUDE.md", "AGENTS.md"}
)  # besides *.py: settings, import-linter configs, intent docs
IGNORED_DIRS = frozenset(
    {".mir", ".git", ".venv", "venv", "__pycache__", "node_modules", ".ruff_cache"}
    | {".mypy_cache", ".pytest_cache", ".tox", ".nox"}
)
DEBOUNCE = 0.2  # seconds without a new write before a run: a burst of saves is one run


def starts_a_run(
    event_type: str,
    path: str,
    is_directory: bool,
    root: str,
    extra_files: frozenset[str] = frozenset(),
    ignored: tuple[str, ...] = (),
) -> bool:
    """Does this file-system event (absolute ``path``) change what lint reads in the
    project at ``root``? ``extra_files`` are read too (``--config``, the baseline);
    paths under ``ignored`` (the cache folder) never count."""
    if event_type not in WRITE_EVENTS or not path:
        return False
    if path in extra_files:
        return True
    if not path.startswith(root + os.sep):
        return False
    if any(path == folder or path.startswith(folder + os.sep) for folder in ignored):
        return False
    parts = path[len(root) + 1 :].split(os.sep)  # relative: the project may live in venv/
    if IGNORED_DIRS.intersection(parts[:-1] if not is_directory else parts):
        return False
    if is_directory:  # a folder created, deleted or renamed: capabilities may change
        return event_type != "modified"
    return parts[-1].endswith(".py") or parts[-1] in READ_NAMES


def watch_boundaries(
    root: Path,
    options: LintOptions,
    on_report: Callable[[LintReport], None],
    on_error: Callable[[MirUserError], None],
    extra_findings: Callable[[], list[Finding] | None] = lambda: None,
    stop: threading.Event | None = None,
    debounce: float = DEBOUNCE,
    extra_files: Iterable[Path] = (),
) -> None:
    """Lint now, then once after every burst of writes to files lint reads, until
    ``stop`` is set or Ctrl-C. ``extra_files`` (e.g. an import-linter config) may lie
    outside ``root``; the baseline is watched unless this run rewrites it each time."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    project, settings = load_lint_project(root)
    cache_dir = (options.cache_dir or project.root / settings.cache_dir).resolve()
    cache = FileParseCache(cache_dir if options.use_cache else None)
    watched = [Path(path).resolve() for path in extra_files]
    baseline = options.baseline or (project.root / settings.baseline if settings.baseline else None)
    if baseline is not None and not options.update_baseline:
        watched.append(baseline.resolve())
    files = frozenset(str(path) for path in watched)
    ignored = (str(cache_dir),)
    top = str(project.root)
    changed = threading.Event()
    stop = stop or threading.Event()

    class _OnWrite(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            paths = [event.src_path, getattr(event, "dest_path", "") or ""]
            for path in paths:
                text = os.fsdecode(path)
                if starts_a_run(event.event_type, text, event.is_directory, top, files, ignored):
                    changed.set()

    def lint_once() -> None:
        try:
            extra = extra_findings()
            report = lint_boundaries(
                root, options, extra or (), cache=cache, require_capabilities=extra is None
            )
            on_report(report)
        except MirUserError as exc:  # a broken config mid-edit: say so, keep watching
            on_error(exc)

    observer = Observer()
    handler = _OnWrite()
    observer.schedule(handler, str(project.root), recursive=True)
    outside = {path.parent for path in watched if project.root not in path.parents}
    for folder in sorted(outside):
        if folder.is_dir():
            observer.schedule(handler, str(folder), recursive=False)
    observer.start()
    try:
        lint_once()
        while not stop.is_set():
            if not changed.wait(0.1):
                continue
            changed.clear()
            while changed.wait(debounce) and not stop.is_set():
                changed.clear()  # still saving (a formatter, a checkout): wait for quiet
            if not stop.is_set():
                lint_once()
    except KeyboardInterrupt:
        pass
    finally:
        observer.stop()
        observer.join()
