"""``--watch``: re-lint on save. One in-memory cache lives across runs, so a save
re-reads and re-parses only the files whose stat changed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from mir.boundaries.cache import FileParseCache
from mir.boundaries.composition import lint_boundaries, load_lint_project
from mir.boundaries.findings import Finding
from mir.boundaries.report import LintReport
from mir.boundaries.settings import LintOptions
from mir.errors import MirUserError

WATCHED_SUFFIXES = (".py", ".md", ".toml")


def watch_boundaries(
    root: Path,
    options: LintOptions,
    on_report: Callable[[LintReport], None],
    on_error: Callable[[MirUserError], None],
    extra_findings: Callable[[], list[Finding] | None] = lambda: None,
    stop: threading.Event | None = None,
    debounce: float = 0.15,
) -> None:
    """Lint now, then after every burst of saves, until ``stop`` is set or Ctrl-C."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    project, settings = load_lint_project(root)
    cache_dir = (options.cache_dir or project.root / settings.cache_dir).resolve()
    cache = FileParseCache(cache_dir if options.use_cache else None)
    changed = threading.Event()
    stop = stop or threading.Event()

    class _OnSave(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
            for path in paths:
                if path.endswith(WATCHED_SUFFIXES) and not path.startswith(str(cache_dir)):
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
    observer.schedule(_OnSave(), str(project.root), recursive=True)
    observer.start()
    try:
        lint_once()
        while not stop.is_set():
            if changed.wait(0.1):
                stop.wait(debounce)  # let a burst of saves (formatters, git) settle
                changed.clear()
                lint_once()
    except KeyboardInterrupt:
        pass
    finally:
        observer.stop()
        observer.join()
