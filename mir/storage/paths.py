"""Paths the user gives (on the command line: ``--output``, ``--html``, ``--write``,
``init FOLDER``), checked before anything is read or written.

One checker for every command, so each problem is one ``error:`` line (exit 2) naming the
option and the path, never a ``FileNotFoundError`` or ``duckdb.IOException`` traceback
half-way through writing: a missing parent folder, a folder that cannot be written, a
file where a folder is expected (or the other way round), a folder that does not exist.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mir.errors import UsageError


def output_file(path: Path, label: str) -> Path:
    """A file the command will (over)write: its folder must exist and be writable."""
    if path.is_dir():
        raise UsageError(f"{label}: {path} is a folder, expected a file")
    _writable(path.parent if str(path.parent) else Path("."), label, for_path=path)
    return path


def output_folder(path: Path, label: str, *, parents: bool = False) -> Path:
    """A folder the command writes into, created if missing: its parent must exist, or
    with ``parents`` (``mir init a/b``, like ``git init``) its nearest existing ancestor."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{label}: {path} is a file, expected a folder", hint="give a folder path")
    if path.is_dir():
        _probe(path, label)
        return path
    parent = path.parent
    while parents and not parent.exists() and parent != parent.parent:
        parent = parent.parent
    _writable(parent, label, for_path=path)
    return path


def input_folder(path: Path, label: str) -> Path:
    """A folder the command reads: it must exist."""
    if not path.exists():
        raise UsageError(f"{label}: folder not found: {path}")
    if not path.is_dir():
        raise UsageError(f"{label}: {path} is a file, expected a folder")
    return path


def _writable(folder: Path, label: str, *, for_path: Path) -> None:
    if not folder.exists():
        raise UsageError(
            f"{label}: {for_path}: folder {folder} does not exist",
            hint=f"create it first: mkdir -p {folder}",
        )
    if not folder.is_dir():
        raise UsageError(f"{label}: {for_path}: {folder} is a file, not a folder")
    _probe(folder, label)


def _probe(folder: Path, label: str) -> None:
    # os.access says yes to root everywhere (and /proc rejects files anyway): the only
    # honest test is to create a file there, and it is gone when closed.
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".mir-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{label}: cannot create files in {folder} ({reason})") from None
