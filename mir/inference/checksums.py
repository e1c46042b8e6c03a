"""Integrity before load: a GGUF's sha256 is checked before llama.cpp opens it.

Why a cache: hashing a 100 MB+ model on every start costs seconds. A file is identified
by its path and identity (``mir.storage.identity``: dev, inode, size, mtime_ns,
ctime_ns): an edited or replaced file changes one of them and is hashed again. mtime
alone is not enough: ``os.utime`` (or ``touch -r``, ``cp -p``, ``rsync -t``) puts it
back after a same-size edit; the kernel sets ctime on every write and on that very
utime call, and no user can set it back. The digests live
in-process and in a small JSON file (``<root>/.mir/cache/sha256.json``) so a second
process does not re-hash an unchanged file either. The cache file is only an
optimisation: a corrupt or unreadable one is ignored and rewritten.

Why one descriptor: hashing a path and then handing the same path to llama.cpp leaves a
window in which the file can be swapped (``mv other.gguf model.gguf``) and the swapped-in
file is loaded unchecked. ``FileHasher.verified`` opens the file once, hashes what that
descriptor reads, and llama.cpp loads ``/proc/self/fd/N``: the very inode that was
checked, whatever the path names meanwhile. A write into that inode while it loads
changes its ctime, which ``CheckedFile.unchanged`` sees after the load. Where there is
no ``/proc/self/fd`` (not Linux), the path is loaded and must still name the checked
inode, unchanged, after the load.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mir.inference.domain import ModelIntegrityError
from mir.storage import DigestCache, identity, write_atomic

CHUNK = 1 << 20
CACHE_FILE = Path(".mir") / "cache" / "sha256.json"
_PROC_FD = Path("/proc/self/fd")


@dataclass(frozen=True)
class CheckedFile:
    """A file open on ``fd`` whose bytes hash to ``digest`` (``stat``: at hashing time)."""

    fd: int
    path: Path
    stat: os.stat_result
    digest: str

    @property
    def load_path(self) -> Path:
        """The name that opens the checked inode itself, not whatever ``path`` names now."""
        proc = _PROC_FD / str(self.fd)
        return proc if _PROC_FD.is_dir() else self.path

    def unchanged(self) -> bool:
        """Nothing wrote into the checked file since it was hashed (the kernel sets ctime
        on every write); without ``/proc/self/fd``, ``path`` must still name it too."""
        now = os.fstat(self.fd)
        if _identity(now) != _identity(self.stat):
            return False
        if self.load_path == self.path:
            try:
                return _identity(os.stat(self.path)) == _identity(self.stat)
            except OSError:
                return False
        return True


def _identity(stat: os.stat_result) -> tuple[int, ...]:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class FileHasher:
    """Streamed sha256 of files, cached by (path, size, mtime_ns, inode, ctime_ns).
    ``hashes`` counts the files actually read (what the tests and a curious operator look at)."""

    def __init__(self) -> None:
        self._cache = DigestCache()  # sha256, by (dev, ino, size, mtime_ns, ctime_ns)
        self._lock = threading.Lock()

    @property
    def hashes(self) -> int:
        return self._cache.hashes

    def digest(self, path: Path, cache_file: Path | None = None) -> str:
        with self.opened(path, cache_file) as checked:
            return checked.digest

    @contextlib.contextmanager
    def opened(self, path: Path, cache_file: Path | None = None) -> Iterator[CheckedFile]:
        """The file open read-only, with the digest of what this descriptor reads; closed
        on exit (a model loaded from ``load_path`` meanwhile holds its own reference)."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            stat = os.fstat(fd)
            yield CheckedFile(fd, Path(path), stat, self._digest(fd, path, stat, cache_file))
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def verified(
        self, path: Path, expected: str, cache_file: Path | None = None
    ) -> Iterator[CheckedFile]:
        """``opened``, refused with ``ModelIntegrityError`` unless its digest is ``expected``."""
        with self.opened(path, cache_file) as checked:
            _check(path, checked.digest, expected)
            yield checked

    def _digest(self, fd: int, path: Path, stat: os.stat_result, cache_file: Path | None) -> str:
        key = (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        with self._lock:
            known = self._cache.known(str(path), identity(stat))
            if known is not None:
                return known
            stored = _read(cache_file).get(_entry(key)) if cache_file else None
            if isinstance(stored, str) and len(stored) == 64:
                self._cache.remember(str(path), identity(stat), stored)
                return stored
            value = self._cache.digest_descriptor(fd, str(path), stat)
            if cache_file is not None:
                _write(cache_file, {**_read(cache_file), _entry(key): value})
            return value

    def verify(self, path: Path, expected: str, cache_file: Path | None = None) -> None:
        """Raise ``ModelIntegrityError`` (one line: path, expected, actual) on a mismatch."""
        _check(path, self.digest(path, cache_file), expected)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def _check(path: Path, actual: str, expected: str) -> None:
    if actual != expected.lower():
        raise ModelIntegrityError(
            f"model integrity: {path} has sha256 {actual}, expected {expected.lower()}; "
            "refused to load it"
        )


def _entry(key: tuple[str, int, int, int, int]) -> str:
    return "|".join(str(part) for part in key)


def _read(cache_file: Path) -> dict[str, object]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(cache_file: Path, data: dict[str, object]) -> None:
    """Atomic replace: two processes writing at once leave one whole file, never half."""
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache_file, json.dumps(data, sort_keys=True), mode=0o600)
    except OSError:
        pass  # a read-only project still verifies; it only hashes again next start


FILE_HASHER = FileHasher()
