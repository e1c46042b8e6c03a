"""The import-linter cache: an unchanged project replays its verdicts, an edit re-scans
only the edited files.

Two ``marshal`` files next to the boundaries cache (stdlib only, so a replay never
imports pydantic, the contract models or the scanner):

* ``importlinter-index``: absolute path -> (dev, ino, size, mtime_ns, ctime_ns, content
  digest) of every scanned file (a ``mir.storage.DigestCache``), and the *record* of
  the last run: its findings and warnings, keyed on every input -- the config file's
  bytes (or, when none was given, the bytes of every file ``lint-imports`` would look
  in), the root packages and the folders they were found in, and every module of them
  with its content digest;
* ``importlinter-entries``: "digest:module:is_package" -> the imports of that content,
  loaded only when a file has to be looked up, so an edit re-extracts that file alone
  (the graph and the contracts are then checked again: they depend on every file).

Both carry the mir version of the code that wrote them (the stat of every source file
of this capability and of the import scanner): editing the checks invalidates the
cache. A damaged or foreign file is an empty cache, never an error.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mir.errors import MirUserError
from mir.storage import DigestCache, write_atomic

if TYPE_CHECKING:
    from mir.boundaries import Finding
    from mir.importlinter.adapters.scanning import Extractor, Located

CACHE_FORMAT = f"mir-importlinter-2-py{sys.version_info[0]}.{sys.version_info[1]}"
INDEX_FILE = "importlinter-index.marshal"
ENTRIES_FILE = "importlinter-entries.marshal"
CONFIG_NAMES = ("setup.cfg", ".importlinter", "pyproject.toml")  # adapters.config's order


class CachedRef(NamedTuple):
    """What the graph needs of an ``ImportRef`` (same attribute names)."""

    module: str
    names: tuple[str, ...]
    line: int
    type_checking: bool
    beyond_top: bool


def _fingerprint() -> str:
    from mir.boundaries import code_fingerprint  # resolved lazily: a stdlib-only module

    package = Path(__file__).resolve().parents[1]
    folders = (package, package / "adapters", package / "domain", package.parent / "boundaries")
    return code_fingerprint(CACHE_FORMAT, folders)


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def config_inputs(root: Path, config: Path | None) -> tuple:
    """Which config a run would use is decided by these bytes: the explicit file, or
    every file ``lint-imports`` would search in ``root``."""
    paths = [config] if config is not None else [root / name for name in CONFIG_NAMES]
    return tuple((str(path), _digest(_read(path))) for path in paths)


class ContractCache:
    """Stat -> digest index, per-content imports and the last run's verdicts, in
    ``folder`` (``None``: in memory only, e.g. one ``--watch`` session without a cache)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._version = _fingerprint()
        index = self._load(INDEX_FILE)
        stats, record = index if isinstance(index, tuple) and len(index) == 2 else ({}, None)
        self._digests = DigestCache(
            stats if isinstance(stats, dict) else {}, algorithm="blake2b", digest_size=16
        )
        self._record: tuple | None = record
        self._entries: dict[str, tuple] | None = None if folder else {}
        self._used_entries: set[str] = set()
        self._read: dict[str, bytes] = {}  # bytes read to hash them, kept for extraction
        self._seen: dict[str, str] = {}  # digests of this run (a --watch run starts afresh)
        self._dirty_index = self._dirty_entries = False
        self.extracted = 0  # files whose imports this run had to extract

    # ------------------------------------------------------------------ files
    def _load(self, name: str) -> Any:
        if self.folder is None:
            return None
        try:
            version, payload = marshal.loads((self.folder / name).read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return None
        return payload if version == self._version else None

    def _store(self, name: str, payload: Any) -> None:
        assert self.folder is not None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"  # self-ignoring, like the boundaries cache
            if not ignore.exists():
                ignore.write_text("# Created by mir automatically.\n*\n")
            write_atomic(self.folder / name, marshal.dumps((self._version, payload)), mode=0o600)
        except OSError:
            return  # a cache that cannot be written costs speed, never the verdict

    def digest(self, path: Path) -> str:
        """Content digest of ``path``: from the index while its identity is unchanged."""
        key = str(path)
        seen = self._seen.get(key)
        if seen is not None:  # the graph scan hashed it already in this run
            return seen
        digest, data = self._digests.read(path)
        if data is not None:  # read to hash it: kept for the extraction
            self._read[key] = data
            self._dirty_index = True
        self._seen[key] = digest
        return digest

    def refs(self, path: Path, module: str, is_package: bool, extract: Extractor) -> Iterable:
        """``RefsCache.refs``: the imports of this content, extracted once."""
        key = f"{self.digest(path)}:{module}:{int(is_package)}"
        if self._entries is None:
            loaded = self._load(ENTRIES_FILE)
            self._entries = loaded if isinstance(loaded, dict) else {}
        self._used_entries.add(key)
        rows = self._entries.get(key)
        if rows is None:
            data = self._read.pop(str(path), None)
            found = extract(data if data is not None else path.read_bytes(), module, is_package)
            rows = tuple(
                (ref.module, ref.names, ref.line, ref.type_checking, ref.beyond_top)
                for ref in found
            )
            self._entries[key] = rows
            self._dirty_entries = True
            self.extracted += 1
        return map(CachedRef._make, rows)

    def tree_key(self, root: Path, located: list[Located]) -> str:
        """Digest of every module the contracts saw: names, files, contents."""
        hasher = hashlib.blake2b(digest_size=16)
        hasher.update(str(root).encode())
        for name, directory, files, namespaces in located:
            hasher.update(repr((name, str(directory), sorted(namespaces))).encode())
            listing = [
                f"{module}|{files[module]}|{self.digest(files[module])}\n"
                for module in sorted(files)
            ]
            hasher.update("".join(listing).encode())
        return hasher.hexdigest()

    # ------------------------------------------------------------------ verdicts
    def replay(self, root: Path, config: Path | None) -> tuple[list[Finding], list[str]] | None:
        """The findings and warnings of the last run when none of its inputs changed;
        None otherwise (or when anything cannot be told: then evaluate)."""
        from mir.boundaries import Finding
        from mir.importlinter.adapters.scanning import find_modules, locate_package

        if self._record is None:
            return None
        try:
            where, inputs, search_dirs, roots, tree, rows, warnings = self._record
        except ValueError:
            return None
        root = root.resolve()
        explicit = None if config is None else str(config.resolve())
        if where != (str(root), explicit):
            return None
        if inputs != config_inputs(root, None if config is None else config.resolve()):
            return None
        dirs = [Path(folder) for folder in search_dirs]
        located: list[Located] = []
        try:
            for name, directory in roots:
                found = locate_package(name, dirs)
                if str(found) != directory:
                    return None
                located.append((name, found, *find_modules(name, found)))
            if self.tree_key(root, located) != tree:
                return None
        except (MirUserError, OSError):
            return None
        return [Finding(*row) for row in rows], list(warnings)

    def record(
        self,
        root: Path,
        config: Path | None,
        search_dirs: list[Path],
        located: list[Located],
        findings: list[Finding],
        warnings: list[str],
    ) -> None:
        """Remember this run's verdicts for the next one (see ``replay``)."""
        from dataclasses import astuple

        root = root.resolve()
        explicit = None if config is None else config.resolve()
        self._record = (
            (str(root), None if explicit is None else str(explicit)),
            config_inputs(root, explicit),
            [str(folder) for folder in search_dirs],
            [(name, str(directory)) for name, directory, _, _ in located],
            self.tree_key(root, located),
            [astuple(finding) for finding in findings],
            list(warnings),
        )
        self._dirty_index = True

    def save(self) -> None:
        """Write what this run used (files no longer scanned are dropped)."""
        if self._digests.prune():  # files no longer scanned
            self._dirty_index = True
        entries = self._entries
        if entries is not None and self._used_entries and len(entries) != len(self._used_entries):
            self._entries = {key: entries[key] for key in self._used_entries if key in entries}
            self._dirty_entries = True
        if self.folder is not None and self._dirty_index:
            self._store(INDEX_FILE, (self._digests.entries, self._record))
        if self.folder is not None and self._dirty_entries and self._entries is not None:
            self._store(ENTRIES_FILE, self._entries)
        self._dirty_index = self._dirty_entries = False
        self._used_entries, self._read, self._seen = set(), {}, {}
