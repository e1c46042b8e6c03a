"""Atomic file replacement: a reader sees the old file or the new one, never half.

The new content goes to a temp file in the same folder (``.<name>.<random>.tmp``, so
the rename never crosses a file system), which is flushed and fsynced, given its mode,
then renamed over ``path`` (``os.replace``); last the folder is fsynced so the rename
itself survives a power cut. If anything raises before the rename (the caller's block,
a full disk, a failed fsync), ``path`` is untouched and the temp file is removed. A
process killed outright (SIGKILL) can leave its temp file behind, never a torn ``path``.

Mode: ``mode`` when given (exactly, whatever the umask); otherwise the mode of the file
being replaced, or for a new file what a plain ``open(path, "w")`` would give (0o666
less the umask). A symlink at ``path`` is replaced by the file, not written through.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_file", "write_atomic"]


def write_atomic(
    path: Path,
    data: str | bytes,
    *,
    encoding: str = "utf-8",
    mode: int | None = None,
) -> None:
    """Replace ``path`` with ``data``: temp file beside it, write, fsync, ``os.replace``,
    fsync the folder. Text is encoded as given (no newline translation)."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_file(path, binary=True, mode=mode) as handle:
        handle.write(payload)


@contextlib.contextmanager
def atomic_file(
    path: Path,
    *,
    binary: bool = False,
    encoding: str = "utf-8",
    mode: int | None = None,
) -> Iterator[IO[Any]]:
    """Yield a writer for the new content of ``path``; on a clean exit it replaces
    ``path`` atomically, and if the block raises nothing replaces it.

    The handle's ``name`` is the temp file's path, so the block may validate what it
    wrote before it counts (text mode writes ``\\n`` as is, like ``newline=""``).
    """
    path = Path(path)
    folder = path.parent
    # the name cut short, so a target whose name is near NAME_MAX still gets a temp file
    temp = folder / f".{path.name[:200]}.{os.urandom(6).hex()}.tmp"

    def opener(name: str, flags: int) -> int:
        return os.open(name, flags | os.O_EXCL, 0o666)

    if binary:
        handle: IO[Any] = open(temp, "wb", opener=opener)  # noqa: SIM115 (closed below)
    else:
        handle = open(temp, "w", encoding=encoding, newline="", opener=opener)  # noqa: SIM115
    try:
        try:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            _set_mode(handle.fileno(), path, mode)
        finally:
            handle.close()
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_folder(folder)


def _set_mode(fd: int, path: Path, mode: int | None) -> None:
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777  # never a setuid/setgid bit on new bytes
        except (FileNotFoundError, NotADirectoryError):
            return  # a new file keeps what the umask gave it
    os.fchmod(fd, mode)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable. A file system that cannot fsync a folder (EINVAL on
    some network mounts) is not an error: the data is in place already."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
