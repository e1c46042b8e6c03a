"""The content-hash cache: valid after a fresh checkout, nearly free when nothing changed.

Two ``marshal`` files (C-speed load, plain tuples only):

* ``boundaries-index``: path -> (dev, ino, size, mtime_ns, ctime_ns, digest) (a
  ``mir.storage.DigestCache``), plus the findings of the last run keyed on a digest of
  *every* input (file digests, intent docs, settings). When a file's identity is
  unchanged its digest is reused without reading it; when the run digest
  is unchanged the findings are reused without parsing or evaluating anything. It also
  holds the *replay record* (``replay.py``): the digest of the pyproject.toml bytes and
  the settings discovery needs, so an unchanged project is answered without validating
  settings at all.
* ``boundaries-entries``: "digest:module:is_package:syntax" -> parse result, loaded only
  when some file has to be looked up. Keyed on *content*, so when a fresh checkout
  changes every mtime, files are re-read and re-hashed (cheap) but not re-parsed
  (import-linter's mtime-keyed cache is slower than no cache there).

Both files carry the cache format and Python version (whether a file parses depends on
it); a mismatch or a damaged file is an empty cache, never an error. Writes are atomic
(temp file + rename) so concurrent runs cannot corrupt them.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.storage import DigestCache, identity, write_atomic

if TYPE_CHECKING:  # a replayed run never looks an entry up: no parser imported
    from mir.boundaries.parsing import Parsed

CACHE_FORMAT = f"mir-lint-8-py{sys.version_info[0]}.{sys.version_info[1]}"
INDEX_FILE = "boundaries-index.marshal"
ENTRIES_FILE = "boundaries-entries.marshal"


def linter_fingerprint() -> str:
    """Format + Python version + the stat of every source file of this linter and of the
    code its findings depend on (intent-doc and settings formats): editing a rule, the
    scanner or ``IntentDoc`` (an editable install, mir linting itself) invalidates the
    cache instead of serving findings computed by the old code."""
    package = Path(__file__).parent
    folders = (package, package / "rules", package.parent / "contracts", package.parent / "project")
    return code_fingerprint(CACHE_FORMAT, folders)


def code_fingerprint(tag: str, folders: Iterable[Path]) -> str:
    """``tag`` plus the name and identity (``mir.storage.identity``: dev, inode, size,
    mtime, ctime) of every ``.py`` file directly in ``folders``: a cache keyed on it is
    dropped when the code that filled it is edited, even with its mtime put back."""
    parts = [tag]
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                ident = ":".join(map(str, identity(entry.stat())))
                parts.append(f"{folder.name}/{entry.name}:{ident}")
    return "|".join(parts)


_FINGERPRINT: list[str] = []


def _version() -> str:
    if not _FINGERPRINT:
        _FINGERPRINT.append(linter_fingerprint())
    return _FINGERPRINT[0]


def _load(path: Path | None) -> Any:
    if path is None or not path.is_file():
        return None
    try:
        version, payload = marshal.loads(path.read_bytes())
    except (EOFError, ValueError, TypeError, OSError):
        return None
    return payload if version == _version() else None


def _store(path: Path, payload: Any) -> None:
    """Write atomically; a cache that cannot be written (read-only checkout, full disk)
    costs speed, never the lint result."""
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            # self-ignoring, like ruff's and pytest's caches: a project that never ran
            # `mir init` (which ignores .mir/) must not commit it, nor have pre-commit
            # report the hook as "files were modified"
            (path.parent / ".gitignore").write_text("# Created by mir automatically.\n*\n")
        write_atomic(path, marshal.dumps((_version(), payload)), mode=0o600)
    except OSError:
        return


class FileParseCache:
    """``ParseCache`` stored in ``folder``; ``folder=None`` keeps it in memory only."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        index = _load(folder / INDEX_FILE if folder else None)
        stats, self._result, self._replay = (
            index if isinstance(index, tuple) and len(index) == 3 else ({}, None, None)
        )
        # set by the composition before a run: what a replay must check (see replay.py)
        self.config: tuple | None = None
        self._digests = DigestCache(stats if isinstance(stats, dict) else {})
        self._entries: dict[str, tuple] | None = None if folder else {}
        self._used_entries: set[str] = set()
        self._index_dirty = self._entries_dirty = False

    def _all_entries(self) -> dict[str, tuple]:
        if self._entries is None:
            loaded = _load(self.folder / ENTRIES_FILE if self.folder else None)
            self._entries = loaded if isinstance(loaded, dict) else {}
        return self._entries

    def digest_for(self, path: str, signature: tuple[int, ...]) -> str | None:
        return self._digests.known(path, signature)

    def remember(self, path: str, signature: tuple[int, ...], digest: str) -> None:
        self._digests.remember(path, signature, digest)
        self._index_dirty = True

    def get(self, key: str) -> Parsed | None:
        plain = self._all_entries().get(key)
        if plain is None:
            return None
        from mir.boundaries.parsing import Parsed

        self._used_entries.add(key)
        return Parsed.from_plain(plain)

    def put(self, key: str, parsed: Parsed) -> None:
        self._all_entries()[key] = parsed.to_plain()
        self._used_entries.add(key)
        self._entries_dirty = True

    def result(self, key: str) -> list[tuple] | None:
        if self._result is not None and self._result[0] == key:
            return list(self._result[1])
        return None

    def store_result(self, key: str, findings: list[tuple]) -> None:
        self._result = (key, tuple(findings))
        self._index_dirty = True

    def mark_inputs(self, inputs: str, key: str) -> None:
        """Record the digest of the tree and the run key this run used, with ``config``,
        so the next run can be a replay."""
        replay = None if self.config is None else (self.config, inputs, key)
        if replay != self._replay:
            self._replay = replay
            self._index_dirty = True

    @property
    def replay(self) -> tuple | None:
        """``(config, inputs digest, run key)`` of the last run that recorded one."""
        return self._replay

    def save(self) -> None:
        """Write what this run used (entries of deleted or changed files are dropped)."""
        if self._digests.prune():  # files deleted or no longer scanned
            self._index_dirty = True
        # (a run that reused its whole result looked nothing up: keep the entries then)
        entries = self._entries
        if entries is not None and self._used_entries and len(entries) != len(self._used_entries):
            self._entries = {key: entries[key] for key in self._used_entries}
            self._entries_dirty = True
        if self.folder is not None and self._index_dirty:
            _store(self.folder / INDEX_FILE, (self._digests.entries, self._result, self._replay))
            self._index_dirty = False
        if self.folder is not None and self._entries_dirty and self._entries is not None:
            _store(self.folder / ENTRIES_FILE, self._entries)
            self._entries_dirty = False
        self._used_entries = set()  # the next run (--watch) marks anew (prune reset the digests')
