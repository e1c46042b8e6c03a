"""Content digests of files, re-hashed only when the file's stat says it changed.

A file is known by its *identity*: (dev, ino, size, mtime_ns, ctime_ns). mtime and size
alone are not enough: ``os.utime`` (``touch -r``, ``cp -p``, ``rsync -t``) puts mtime
back after a same-size edit. The kernel sets ctime on every write and on that very
utime call, and no user can set it back; a file replaced by another (``mv``, a fresh
checkout) has a new inode. So an unchanged identity means unchanged bytes, short of a
clock set back by root.

``DigestCache`` maps a key (a path) to its last identity and digest. ``entries`` is a
plain dict of tuples ``(*identity, digest)``, so an owner can persist it (marshal,
JSON) and hand it back to the next process; ``prune`` drops the keys not looked up
since the last prune (files deleted or no longer scanned). The digest is sha256 unless
the owner names another ``hashlib`` algorithm (the lint caches' content keys are
16-byte blake2b). Thread-safe.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DigestCache", "Identity", "identity"]

Identity = tuple[int, int, int, int, int]
CHUNK = 1 << 20


def identity(stat: os.stat_result) -> Identity:
    """(dev, ino, size, mtime_ns, ctime_ns): what changes when the file's bytes do."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _hasher(algorithm: str, digest_size: int | None) -> Callable[[], Any]:
    if algorithm == "blake2b":
        size = digest_size or 64
        return lambda: hashlib.blake2b(digest_size=size)
    return lambda: hashlib.new(algorithm)


class DigestCache:
    """Key -> (identity, digest); a file is read and hashed again only when its
    identity changed. ``hashes`` counts the files actually hashed."""

    def __init__(
        self,
        entries: dict[str, tuple[Any, ...]] | None = None,
        *,
        algorithm: str = "sha256",
        digest_size: int | None = None,
    ) -> None:
        # taken as given (a replayed lint run loads thousands): ``known`` ignores an
        # entry that is not a tuple ending in a digest
        self.entries: dict[str, tuple[Any, ...]] = entries if entries is not None else {}
        self._new = _hasher(algorithm, digest_size)
        self._lock = threading.Lock()
        self._used: set[str] = set()
        self.hashes = 0

    def hash_bytes(self, data: bytes) -> str:
        hasher = self._new()
        hasher.update(data)
        return hasher.hexdigest()

    def known(self, key: str, ident: tuple[int, ...]) -> str | None:
        """The digest remembered for ``key`` when its identity is still ``ident``."""
        with self._lock:
            entry = self.entries.get(key)
            self._used.add(key)
            if type(entry) is tuple and entry[:-1] == tuple(ident):
                digest = entry[-1]
                return digest if isinstance(digest, str) else None
            return None

    def remember(self, key: str, ident: tuple[int, ...], digest: str) -> None:
        with self._lock:
            self.entries[key] = (*ident, digest)
            self._used.add(key)

    def read(self, path: Path) -> tuple[str, bytes | None]:
        """The digest of ``path``, and its bytes when they had to be read for it (a
        caller that needs them then reads the file once)."""
        key = str(path)
        digest = self.known(key, identity(os.stat(key)))
        if digest is not None:
            return digest, None
        with open(key, "rb") as handle:  # the identity of what is read, not of the stat
            ident = identity(os.fstat(handle.fileno()))
            data = handle.read()
        digest = self.hash_bytes(data)
        with self._lock:
            self.hashes += 1
        self.remember(key, ident, digest)
        return digest, data

    def digest(self, path: Path) -> str:
        """The digest of ``path`` (hashed only when its identity changed)."""
        return self.read(path)[0]

    def digest_descriptor(self, fd: int, key: str, stat: os.stat_result) -> str:
        """The digest of what the open descriptor ``fd`` reads (``stat``: its fstat),
        streamed: the very inode the caller holds, whatever ``key`` names meanwhile."""
        ident = identity(stat)
        digest = self.known(key, ident)
        if digest is not None:
            return digest
        hasher = self._new()
        offset = 0
        while chunk := os.pread(fd, CHUNK, offset):
            hasher.update(chunk)
            offset += len(chunk)
        digest = hasher.hexdigest()
        with self._lock:
            self.hashes += 1
        self.remember(key, ident, digest)
        return digest

    def prune(self) -> bool:
        """Drop the keys not looked up since the last prune; True when any went."""
        with self._lock:
            gone = len(self.entries) != len(self._used & self.entries.keys())
            if gone:
                self.entries = {key: self.entries[key] for key in self._used if key in self.entries}
            self._used = set()
            return gone

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self._used.clear()
