"""Noticing that ``models.toml`` changed, for a long-running process (agents, drift watch).

One watchdog observer per process per project root, shared by everyone who subscribes;
started with the first subscriber, stopped when the last one leaves. On a change the new
registry is parsed once and handed to every subscriber; a malformed file keeps the
previous registry (one warning line on stderr) and nobody is called.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.models.domain import Registry
from mir.models.registry_file import FILE_NAME, read_registry

# How long after an event the file is read (a save is several events).
SETTLE_S = 0.05

Subscriber = Callable[[Registry], None]

_WATCHERS: dict[Path, RegistryWatcher] = {}
_WATCHERS_LOCK = threading.Lock()


class Subscription:
    def __init__(self, watcher: RegistryWatcher, callback: Subscriber) -> None:
        self._watcher, self._callback = watcher, callback

    def close(self) -> None:
        self._watcher._unsubscribe(self._callback)


class RegistryWatcher:
    """Calls each subscriber with the new ``Registry`` after models.toml changes."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.path = self.root / FILE_NAME
        self._subscribers: list[Subscriber] = []
        self._observer: Any = None
        self._lock = threading.Lock()
        self._last: str | None = self._text()

    @classmethod
    def for_root(cls, root: Path) -> RegistryWatcher:
        with _WATCHERS_LOCK:
            key = root.resolve()
            if key not in _WATCHERS:
                _WATCHERS[key] = cls(key)
            return _WATCHERS[key]

    def subscribe(self, callback: Subscriber) -> Subscription:
        with self._lock:
            self._subscribers.append(callback)
            if self._observer is None:
                self._start()
        return Subscription(self, callback)

    @property
    def running(self) -> bool:
        return self._observer is not None

    def _unsubscribe(self, callback: Subscriber) -> None:
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)
            observer = self._observer if not self._subscribers else None
            if observer is not None:
                self._observer = None
        if observer is not None:
            observer.stop()
            if observer is not threading.current_thread():
                observer.join(timeout=5)

    def _start(self) -> None:
        from watchdog.events import FileSystemEventHandler  # lazy: only long-running users
        from watchdog.observers import Observer

        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                paths = {getattr(event, "src_path", ""), getattr(event, "dest_path", "")}
                if any(p and Path(str(p)).name == FILE_NAME for p in paths):
                    watcher.changed()

        # watchdog logs its own shutdown race ("InotifyEmitter.queue_events() called when
        # the thread is inactive") at ERROR; with no handler Python prints it on stderr,
        # a stray line before mir's one-line error. mir reports what matters itself.
        logging.getLogger("watchdog").addHandler(logging.NullHandler())
        observer = Observer()
        # The folder, not the file: editors and `mir models` replace the file.
        observer.schedule(_Handler(), str(self.root), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def _text(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError:
            return None

    def changed(self) -> None:
        """Re-read the file (called on the observer's thread; public for tests/benches)."""
        # A save truncates, then writes: wait out the burst, and never take an empty file
        # (a write in progress) for a registry with no models.
        time.sleep(SETTLE_S)
        text = self._text()
        if text is None or not text.strip() or text == self._last:
            return  # one save makes several events; a vanished file keeps the old registry
        try:
            registry = read_registry(self.root)
        except ConfigError as exc:
            print(
                f"mir: {FILE_NAME} changed but cannot be read, keeping the previous "
                f"registry: {exc}",
                file=sys.stderr,
                flush=True,
            )
            self._last = text
            return
        self._last = text
        if registry is None:
            return
        for callback in list(self._subscribers):
            try:
                callback(registry)
            except Exception as exc:  # one subscriber's failure must not stop the others
                print(f"mir: applying the new {FILE_NAME} failed: {exc}", file=sys.stderr)
