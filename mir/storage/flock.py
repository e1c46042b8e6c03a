"""Advisory ``flock`` locks across processes: one wait loop for every lock in mir.

``file_lock`` holds a lock on a lock file (created with its folder when missing; a
shared lock opens an existing file read-only, so readers need no write access) for
the ``with`` block and yields whether it got it: ``timeout=None`` waits as long as it
takes, ``0`` tries once, any other value polls until that many seconds have passed.
The lock is dropped when its descriptor is closed, which the kernel also does for a
process that dies: a crashed holder never leaves a stale lock behind.

``lock_descriptor`` is the same wait on a descriptor the caller opened itself (a
trace segment its writer holds for as long as it is open).

``flock`` locks belong to an open file description, not to a process: two ``with``
blocks in one process (two threads) exclude each other as two processes do.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_lock", "lock_descriptor"]

_FIRST_DELAY_S = 0.002
_MAX_DELAY_S = 0.02


def lock_descriptor(fd: int, *, exclusive: bool = True, timeout: float | None = None) -> bool:
    """``flock`` the open descriptor ``fd``; True when held, False when ``timeout``
    seconds passed first (None: wait as long as it takes; 0: try once)."""
    kind = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    if timeout is None:
        fcntl.flock(fd, kind)
        return True
    deadline = time.monotonic() + timeout
    delay = _FIRST_DELAY_S
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY_S)


@contextlib.contextmanager
def file_lock(
    path: Path,
    *,
    exclusive: bool = True,
    timeout: float | None = None,
    mode: int = 0o600,
) -> Iterator[bool]:
    """Hold a ``flock`` on ``path`` (created, with its folder, as ``mode`` less the
    umask) for the block; yields True when held, False when ``timeout`` ran out.

    Opening it raises ``OSError`` as ``os.open`` does (the caller says what failed)."""
    fd = _open(Path(path), exclusive=exclusive, mode=mode)
    try:
        yield lock_descriptor(fd, exclusive=exclusive, timeout=timeout)
    finally:
        os.close(fd)  # drops the lock


def _open(path: Path, *, exclusive: bool, mode: int) -> int:
    if not exclusive:
        with contextlib.suppress(FileNotFoundError):
            return os.open(path, os.O_RDONLY)
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, mode)
