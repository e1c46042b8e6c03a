"""Segment files: each writing process appends to files only it writes.

A writer creates ``segments/<host>-<pid>-<random>.jsonl`` and holds an exclusive
``flock`` on it for as long as the file is open. That lock is the whole protocol:

* a segment whose lock can be taken is *closed* (its writer rotated away from it,
  closed the store, or died -- the kernel drops a dead process's locks), so it may be
  compacted; a segment whose lock is held is *live* and is only read;
* the file is created under a hidden name, locked, then renamed into place, so a
  compactor can never see it unlocked before the writer holds it.

Appends are one ``os.write`` of whole lines on an ``O_APPEND`` descriptor: a crash can
leave at most a torn last line, which readers skip and compaction reports. After each
append the segment's head record in the manifest (``manifest.py``) is rewritten in place
with the new line count and last hash: written *after* the lines, so a head never counts
a line that is not on disk (a crash in between leaves one line more than it counts).
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from uuid import uuid4

from mir.storage import file_lock, lock_descriptor
from mir.traces.domain import TraceStoreError
from mir.traces.manifest import Manifest, head_record
from mir.traces.records import encode_line, genesis, link

SEGMENT_SUFFIX = ".jsonl"


class SegmentWriter:
    """Appends hash-chained lines to this process's current segment, rotating by size."""

    def __init__(self, folder: Path, manifest: Manifest, *, max_lines: int, fsync: bool) -> None:
        self.folder = folder
        self.manifest = manifest
        self._head_fd: int | None = None
        self.max_lines = max_lines
        self.fsync = fsync
        self._fd: int | None = None
        self._pid = 0
        self.name = ""
        self._n = 0
        self._prev = ""
        self.rotations = 0

    def write(self, bodies: Sequence[str]) -> None:
        """Append one line per body; durable against a process crash when it returns."""
        if self._fd is not None and (self._pid != os.getpid() or self._n >= self.max_lines):
            self._release()  # rotated, or forked: a child never continues its parent's chain
        if self._fd is None:
            self._open()
        assert self._fd is not None
        parts = []
        n, prev = self._n, self._prev
        for body in bodies:
            digest = link(prev, body)
            parts.append(encode_line(n, digest, body))
            n, prev = n + 1, digest
        payload = "".join(parts).encode()
        view = memoryview(payload)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self.fsync:
            os.fsync(self._fd)
        assert self._head_fd is not None
        os.pwrite(self._head_fd, head_record(n, prev), 0)
        self._n, self._prev = n, prev

    def close(self) -> None:
        self._release()

    def _open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        name = f"{socket.gethostname()}-{pid}-{uuid4().hex[:12]}{SEGMENT_SUFFIX}"
        hidden = self.folder / f".{name}.new"
        fd = os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        lock_descriptor(fd)  # a new file under a hidden name: nobody else holds it
        # Registered before it is visible: a verifier that lists a segment file always
        # finds its ``open`` record and its head record.
        try:
            self.manifest.adopt_if_new([p.name for p in segment_files(self.folder)])
            self._head_fd = self.manifest.open_head(name, genesis(name))
            self.manifest.record({"op": "open", "segment": name}, fsync=self.fsync)
        except BaseException:
            os.close(fd)
            hidden.unlink(missing_ok=True)
            raise
        os.rename(hidden, self.folder / name)
        self._fd, self._pid, self.name = fd, pid, name
        self._n, self._prev = 0, genesis(name)

    def _release(self) -> None:
        # Closing drops the flock, so the segment counts as closed. A forked child closes
        # its inherited copy too, or it would keep its parent's segment looking live.
        if self._fd is not None:
            os.close(self._fd)
            if self._head_fd is not None:
                os.close(self._head_fd)
            self.rotations += self._pid == os.getpid()
            self._fd = self._head_fd = None


def segment_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(SEGMENT_SUFFIX))


def is_closed(path: Path) -> bool:
    """True when no process holds the segment open for writing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return lock_descriptor(fd, timeout=0)
    finally:
        os.close(fd)  # also releases the probe lock


def closed_segments(folder: Path) -> list[Path]:
    return [p for p in segment_files(folder) if is_closed(p)]


def line_count(path: Path) -> int:
    """Lines in the file, a torn last line included."""
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def torn_tail(path: Path) -> bytes:
    """The bytes after the last newline: a line whose write never completed."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return b""
        chunk = 4096
        tail = b""
        while size > 0:
            step = min(chunk, size)
            size -= step
            handle.seek(size)
            tail = handle.read(step) + tail
            cut = tail.rfind(b"\n")
            if cut >= 0:
                return tail[cut + 1 :]
        return tail


@contextlib.contextmanager
def folder_lock(lock_file: Path, *, exclusive: bool, wait: float) -> Iterator[bool]:
    """Hold the store-wide lock: shared for readers, exclusive for compaction.

    Yields False (instead of blocking) when the lock is not free within ``wait``
    seconds; ``wait=0`` tries once. A reader opens the lock file read-only (a shared
    ``flock`` needs no write access), so reading works on a read-only ``.mir``; where
    the file does not exist and cannot be created, no one can be compacting either.
    """
    if lock_file.exists() and not lock_file.is_file():
        raise TraceStoreError(
            "the trace store's lock is not a regular file",
            where=str(lock_file),
            hint="remove it (it only ever holds a lock, never data) and run the command again",
        )
    with contextlib.ExitStack() as stack:
        try:
            held = stack.enter_context(file_lock(lock_file, exclusive=exclusive, timeout=wait))
        except OSError as exc:
            if exclusive or lock_file.exists():
                raise TraceStoreError(
                    f"the trace store is not writable ({exc.strerror})",
                    where=str(lock_file.parent),
                    hint="reading works; compacting needs write access to this folder",
                ) from exc
            held = True  # a read-only store nobody has compacted: nothing to wait for
        yield held
