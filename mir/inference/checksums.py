"""Integrity before load: a GGUF's sha256 is checked before llama.cpp opens it.

Why a cache: hashing a 100 MB+ model on every start costs seconds. A file is identified
by (path, size, mtime_ns, inode, ctime_ns): an edited or replaced file changes one of
them and is hashed again. mtime alone is not enough: ``os.utime`` (or ``touch -r``,
``cp -p``, ``rsync -t``) puts it back after a same-size edit; the kernel sets ctime on
every write and on that very utime call, and no user can set it back. The digests live
in-process and in a small JSON file (``<root>/.mir/cache/sha256.json``) so a second
process does not re-hash an unchanged file either. The cache file is only an
optimisation: a corrupt or unreadable one is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

from mir.inference.domain import ModelIntegrityError

CHUNK = 1 << 20
CACHE_FILE = Path(".mir") / "cache" / "sha256.json"


class FileHasher:
    """Streamed sha256 of files, cached by (path, size, mtime_ns, inode, ctime_ns).
    ``hashes`` counts the files actually read (what the tests and a curious operator look at)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int, int, int], str] = {}
        self._lock = threading.Lock()
        self.hashes = 0

    def digest(self, path: Path, cache_file: Path | None = None) -> str:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        with self._lock:
            if key in self._known:
                return self._known[key]
            stored = _read(cache_file).get(_entry(key)) if cache_file else None
            if isinstance(stored, str) and len(stored) == 64:
                self._known[key] = stored
                return stored
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
            value = digest.hexdigest()
            self.hashes += 1
            self._known[key] = value
            if cache_file is not None:
                _write(cache_file, {**_read(cache_file), _entry(key): value})
            return value

    def verify(self, path: Path, expected: str, cache_file: Path | None = None) -> None:
        """Raise ``ModelIntegrityError`` (one line: path, expected, actual) on a mismatch."""
        actual = self.digest(path, cache_file)
        if actual != expected.lower():
            raise ModelIntegrityError(
                f"model integrity: {path} has sha256 {actual}, expected {expected.lower()}; "
                "refused to load it"
            )

    def clear(self) -> None:
        with self._lock:
            self._known.clear()


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
        fd, tmp = tempfile.mkstemp(dir=cache_file.parent, prefix=".sha256-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, sort_keys=True)
        os.replace(tmp, cache_file)
    except OSError:
        pass  # a read-only project still verifies; it only hashes again next start


FILE_HASHER = FileHasher()
