"""Edits a stat-keyed cache must see: same size, mtime put back (``touch -r``), and a
file replaced by another of the same size and mtime (``mv``, ``cp -p``)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _ctime_moves_on(path: Path, before: os.stat_result) -> None:
    """The kernel's ctime is coarse (a clock tick): touch the metadata again, mtime kept,
    until ctime has moved, so a test never depends on how fast it ran."""
    deadline = time.monotonic() + 5
    while os.stat(path).st_ctime_ns == before.st_ctime_ns:
        assert time.monotonic() < deadline, "ctime never moved"
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def rewrite_keeping_mtime(path: Path, data: bytes) -> None:
    """Overwrite ``path`` in place with ``data`` (same length), then put its mtime back."""
    before = os.stat(path)
    assert len(data) == before.st_size, "a same-size edit"
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    _ctime_moves_on(path, before)
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def replace_keeping_mtime(path: Path, data: bytes) -> None:
    """Put a new file (new inode) with ``data`` (same length) and the old mtime in its place."""
    before = os.stat(path)
    assert len(data) == before.st_size, "a same-size replacement"
    other = path.with_name(path.name + ".other")
    other.write_bytes(data)
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, path)
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
