"""Live OTLP export: each flow's spans leave as the flow happens, never in its way.

``[tool.mir.otel] endpoint`` (or ``$OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``) turns it on
for every process that writes the project's traces. The trace store tells the export
of the lines it wrote (``observers.py``); the export writes them, as they are, to a
pipe read by a sender process of its own (``live_sender.py``, started on the first
line), which builds the spans and posts them through OpenTelemetry's batch processor.
The decision's thread pays one non-blocking ``write``: the span building, encoding and
posting run on another core, outside this process's GIL.

An endpoint that is down or slow costs counted drops, never an error or a wait: when
the sender falls behind and the pipe and ``max_queue`` lines of buffer are full, new
lines are dropped (whole, never cut), the sender drops what it cannot post, and at exit
the export waits at most ``timeout_s`` (plus a second) for the sender to finish.
``close()`` returns what was sent and dropped; a process that dropped spans says so
once, as a warning on the ``mir.otel`` logger. A forked worker starts its own sender.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.traces.domain import OtelSettings
from mir.traces.observers import watch

if TYPE_CHECKING:
    from mir.project import Project

_log = logging.getLogger("mir.otel")
_HOLD_S = 0.2
_HOLD_BYTES = 64 << 10


def endpoint_url(settings: OtelSettings, environ: Any) -> str | None:
    """Where spans go: ``<endpoint>/v1/traces``, or None when export is off."""
    if not settings.enabled or environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    if settings.endpoint:
        return settings.endpoint.rstrip("/") + "/v1/traces"
    if full := environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return full
    if base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return base.rstrip("/") + "/v1/traces"
    return None


class LiveExport:
    def __init__(self, url: str, settings: OtelSettings, folder: Path) -> None:
        self.url = url
        self._settings = settings
        self._folder = folder
        self._lock = threading.Lock()
        self._sender: subprocess.Popen[bytes] | None = None
        self._pending = bytearray()  # lines the pipe had no room for yet
        self._pending_lines = 0
        self._since = 0.0
        self._dropped = 0
        self._closed = False
        self._final: dict[str, Any] | None = None
        self._unwatch = watch(self, folder, lines=True)
        if hasattr(os, "register_at_fork"):  # a forked worker starts its own sender
            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: (live := ref()) and live._after_fork())

    # -- on the decision's thread: one non-blocking write --------------------------

    def __call__(self, lines: Sequence[str]) -> None:
        with self._lock:
            if self._closed:
                self._dropped += len(lines)
                return
            if self._pending_lines + len(lines) > self._settings.max_queue:
                self._dropped += len(lines)  # the sender is behind: drop new, whole lines
            else:
                if not self._pending:
                    self._since = time.monotonic()
                self._pending += "".join(f"{line}\n" for line in lines).encode()
                self._pending_lines += len(lines)
            # One write a flow, not one an event: at a status (final or pending), a
            # backlog, or lines older than _HOLD_S. A syscall that wakes the sender costs
            # more than everything else here.
            if (
                any('"status":"' in line for line in lines)
                or len(self._pending) > _HOLD_BYTES
                or time.monotonic() - self._since > _HOLD_S
            ):
                self._write()

    def _write(self) -> None:
        sender = self._sender or self._start()
        if sender is None or not self._pending:
            return
        try:
            written = os.write(sender.stdin.fileno(), self._pending)  # type: ignore[union-attr]
        except BlockingIOError:
            return
        except OSError:  # the sender died: what it had not read is lost
            self._dropped += self._pending_lines
            self._pending.clear()
            self._pending_lines = 0
            return
        done = self._pending[:written].count(b"\n")
        del self._pending[:written]
        self._pending_lines -= done

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            self._sender = subprocess.Popen(
                [sys.executable, "-m", "mir.traces.live_sender", self.url, str(self._folder),
                 self._settings.model_dump_json()],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except OSError:
            self._closed = True
            return None
        os.set_blocking(self._sender.stdin.fileno(), False)  # type: ignore[union-attr]
        return self._sender

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        if self._sender is not None and self._sender.stdin is not None:
            os.close(self._sender.stdin.fileno())  # the parent's pipe: never ours to write
        self._sender = None
        self._pending.clear()
        self._pending_lines = 0
        self._dropped = 0

    # -- closing -------------------------------------------------------------------

    def close(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Hand the sender what is left and wait for it (at most ``timeout_s``, default
        the setting, plus a second): spans sent and dropped."""
        if self._final is not None:
            return self._final
        wait = (self._settings.timeout_s if timeout_s is None else timeout_s) + 1.0
        deadline = time.monotonic() + wait
        self._unwatch()
        with self._lock:
            self._closed = True
            while self._pending and self._sender and time.monotonic() < deadline:
                self._write()
                if self._pending:
                    time.sleep(0.005)
            lost = self._dropped + self._pending_lines
            sent, unconfirmed = 0, 0
            if self._sender is not None:
                sent, unconfirmed = self._finish(self._sender, deadline)
        final = {"endpoint": self.url, "sent": sent, "dropped": lost + unconfirmed}
        if final["dropped"]:
            _log.warning(
                "%d of %d spans were not delivered to %s (endpoint down or slow)",
                final["dropped"], final["dropped"] + sent, self.url,
            )  # fmt: skip
        self._final = final
        return final

    @staticmethod
    def _finish(sender: subprocess.Popen[bytes], deadline: float) -> tuple[int, int]:
        try:
            # closes the pipe (the sender's end of input), then reads its counts
            out, _ = sender.communicate(timeout=max(0.1, deadline - time.monotonic()))
            counts = json.loads(out.decode().strip().splitlines()[-1])
            return int(counts["sent"]), int(counts["dropped"])
        except (subprocess.TimeoutExpired, OSError, ValueError, IndexError, KeyError):
            sender.kill()
            sender.wait()
            return 0, 1  # nothing it sent is confirmed: counted as one drop at least


_started: dict[tuple[str, str, str], LiveExport] = {}
_start_lock = threading.Lock()


def start_live_export(project: Project, folder: Path, environ: Any = None) -> LiveExport | None:
    """The live export of the trace store at ``folder`` to the project's endpoint
    (started once per process), or None when export is off."""
    settings = project.section("otel", OtelSettings)
    url = endpoint_url(settings, os.environ if environ is None else environ)
    if url is None:
        return None
    key = (url, settings.service_name, str(folder.resolve()))
    with _start_lock:
        live = _started.get(key)
        if live is None or live._closed:
            live = _started[key] = LiveExport(url, settings, folder.resolve())
            atexit.register(live.close)
    return live


def live_exports() -> list[LiveExport]:
    """The live exports this process started and has not closed."""
    return [live for live in _started.values() if not live._closed]
