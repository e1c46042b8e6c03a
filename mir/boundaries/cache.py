"""The content-hash parse cache: valid after a fresh checkout, cheap when nothing changed.

Two maps in one ``marshal`` file (C-speed load, plain tuples only):

* ``stats``: path -> (mtime_ns, size, digest). When a file's stat is unchanged its
  content digest is reused without reading the file (the warm path).
* ``entries``: "digest:module:is_package" -> parse result. Keyed on *content*, so when
  a fresh checkout changes every mtime, files are re-read and re-hashed but not
  re-parsed (import-linter's mtime-keyed cache is slower than no cache there).

The file is versioned with the extractor version and the Python version (whether a
file parses depends on it); a mismatch or a damaged file is an empty cache, never an
error. Writes are atomic (temp file + rename) so parallel runs cannot corrupt it.
"""

from __future__ import annotations

import marshal
import os
import sys
import tempfile
from pathlib import Path

from mir.boundaries.parsing import Parsed

CACHE_VERSION = f"mir-lint-3-py{sys.version_info[0]}.{sys.version_info[1]}"
CACHE_FILE = "boundaries.marshal"


class FileParseCache:
    """``ParseCache`` stored in ``folder``; ``folder=None`` keeps it in memory only."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / CACHE_FILE if folder is not None else None
        self._stats: dict[str, tuple[int, int, str]] = {}
        self._entries: dict[str, tuple] = {}
        self._used_entries: set[str] = set()
        self._used_stats: set[str] = set()
        self._dirty = False
        if self.path is not None and self.path.is_file():
            try:
                version, stats, entries = marshal.loads(self.path.read_bytes())
            except (EOFError, ValueError, TypeError, OSError):
                return
            if version == CACHE_VERSION:
                self._stats, self._entries = stats, entries

    def digest_for(self, path: str, signature: tuple[int, int]) -> str | None:
        known = self._stats.get(path)
        if known is not None and (known[0], known[1]) == signature:
            self._used_stats.add(path)
            return known[2]
        return None

    def remember(self, path: str, signature: tuple[int, int], digest: str) -> None:
        self._stats[path] = (signature[0], signature[1], digest)
        self._used_stats.add(path)
        self._dirty = True

    def get(self, key: str) -> Parsed | None:
        plain = self._entries.get(key)
        if plain is None:
            return None
        self._used_entries.add(key)
        return Parsed.from_plain(plain)

    def put(self, key: str, parsed: Parsed) -> None:
        self._entries[key] = parsed.to_plain()
        self._used_entries.add(key)
        self._dirty = True

    def save(self) -> None:
        """Write what this run used (entries of deleted files are dropped)."""
        stale = len(self._entries) != len(self._used_entries) or len(self._stats) != len(
            self._used_stats
        )
        if self.path is None or not (self._dirty or stale):
            return
        stats = {p: self._stats[p] for p in self._used_stats}
        entries = {k: self._entries[k] for k in self._used_entries}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".boundaries.")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps((CACHE_VERSION, stats, entries)))
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        self._stats, self._entries = stats, entries
        self._dirty = False
