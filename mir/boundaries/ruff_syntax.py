"""MIR301's syntax check in ruff's parser: native, on every core, beside the import scan.

Why: a complete CPython parse per file (``symtable``, the cheapest one measured) costs
~0.14 ms of this process's time per file, more than the whole rest of a cold run. ruff
(a Rust parser, already a dependency) checks the same 4,000 files in ~0.1 s on the
other cores while this process scans imports, so the check costs almost no wall time.

What it reports: ruff's ``invalid-syntax`` diagnostics for this interpreter's version
(``--target-version``): the grammar, plus the compile-time errors ruff knows (a
duplicate parameter, ``nonlocal`` at module level, syntax newer than this Python), plus
the pyflakes rules for compile-time ``SyntaxError``s (``COMPILE_ERRORS``).
``tests/unit/boundaries/test_ruff_syntax.py`` holds it to CPython: every file that
``ast.parse`` rejects is flagged, and every file it flags ``compile`` rejects. Scope
errors only CPython's symbol table finds (``nonlocal x`` with no ``x``) are not
reported by this checker; ``[tool.mir.lint] syntax_checker = "python"`` checks with
CPython itself.

Files ruff cannot read as UTF-8 (a PEP 263 cookie naming another encoding) or holding
NUL bytes are not sent to ruff: the caller checks them with CPython.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mir.storage import identity

if TYPE_CHECKING:  # a replayed run only stats the binary: it never runs ruff
    import subprocess

# Arguments per ruff process: below Windows' 32 KiB command line and, elsewhere, well
# below Linux's 2 MiB ARG_MAX (one process per ~10,000 files: each costs a start-up).
_MAX_ARGUMENT_CHARS = 24_000 if sys.platform == "win32" else 400_000
# pyflakes rules for what CPython's compiler rejects with a SyntaxError after parsing:
# a late or unknown ``__future__`` import, ``break``/``continue`` outside a loop,
# ``yield``/``await`` outside a function, ``return`` outside a function.
COMPILE_ERRORS = ("F404", "F407", "F701", "F702", "F704", "F706")
_SYNTAX_CODES = frozenset({None, "invalid-syntax", "E999", *COMPILE_ERRORS})


def ruff_binary() -> str | None:
    """The ruff executable of the installed ``ruff`` package, or None."""
    try:
        from ruff import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return None


def checker_tag(binary: str) -> str:
    """Identity of the checker for cache keys (a different ruff may judge differently):
    its path and file identity (``mir.storage.identity``: a reinstalled binary has a new
    inode even at the same size and mtime), so a replay can tell it is unchanged
    without searching for it."""
    return f"ruff:{binary}:" + ":".join(map(str, identity(os.stat(binary))))


def same_ruff(tag: str) -> bool:
    """True when ``tag`` (from ``checker_tag``) still names the installed ruff binary."""
    if not tag.startswith("ruff:"):
        return False
    binary = tag[len("ruff:") :].rsplit(":", 5)[0]  # the five identity fields
    try:
        return checker_tag(binary) == tag
    except OSError:
        return False


def ruff_can_check(source: bytes) -> bool:
    """True when ruff reads ``source`` as CPython does (UTF-8, no NUL byte)."""
    if b"\0" in source:
        return False
    if source.isascii():
        return True
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class RuffError(RuntimeError):
    """ruff could not run or answered something unexpected (the caller falls back)."""


class RuffSyntaxCheck:
    """ruff processes checking ``paths`` (relative to ``root``) in the background.
    (A plain class: a replayed run imports this module, and a dataclass costs ~2 ms.)"""

    def __init__(
        self, binary: str, root: Path, paths: list[str], threads: int = 1, timeout_s: float = 600
    ) -> None:
        self.binary = binary
        self.timeout_s = timeout_s  # then the caller checks with CPython instead
        self.root = root
        self.paths = paths
        self.threads = threads
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> RuffSyntaxCheck:
        import subprocess

        target = f"py{sys.version_info[0]}{sys.version_info[1]}"
        command = [
            self.binary,
            "check",
            "--no-cache",
            "--isolated",
            "--no-fix",
            "--quiet",
            "--select",
            ",".join(COMPILE_ERRORS),
            "--target-version",
            target,
            "--output-format",
            "json",
            "--",
        ]
        # One parser thread per process: this process scans imports on another core
        # meanwhile, and ruff's default (a thread per core) would compete with it.
        environment = {**os.environ, "RAYON_NUM_THREADS": str(self.threads)}
        for chunk in _chunks(self.paths):
            try:
                process = subprocess.Popen(
                    [*command, *chunk],
                    cwd=self.root,
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            except OSError as exc:
                self.close()
                raise RuffError(f"cannot run {self.binary}: {exc}") from exc
            self.processes.append(process)
        return self

    def problems(self) -> dict[str, tuple[int, int, str]]:
        """The first syntax error of each flagged path: ``(line, column, message)``,
        column 0-based like CPython's. Raises ``RuffError`` when a process failed."""
        import json
        import subprocess

        found: dict[str, tuple[int, int, str]] = {}
        relative = {os.path.normcase(os.path.join(self.root, path)): path for path in self.paths}
        try:
            for process in self.processes:
                try:
                    out, err = process.communicate(timeout=self.timeout_s)
                except subprocess.TimeoutExpired as exc:
                    raise RuffError(f"ruff took over {self.timeout_s:.0f} s") from exc
                if process.returncode not in (0, 1):
                    message = err.decode("utf-8", "replace").strip().splitlines()
                    raise RuffError(f"ruff exited {process.returncode}: {' '.join(message[:3])}")
                try:
                    diagnostics = json.loads(out or b"[]")
                except ValueError as exc:
                    raise RuffError(f"ruff printed something that is not JSON: {exc}") from exc
                if not isinstance(diagnostics, list) or (
                    process.returncode == 1 and not diagnostics
                ):
                    raise RuffError("ruff reported problems but listed none")
                for item in diagnostics:
                    if item.get("code") not in _SYNTAX_CODES:
                        continue
                    path = _relative(item["filename"], relative, self.root)
                    location = item.get("location") or {}
                    problem = (
                        int(location.get("row") or 1),
                        max(int(location.get("column") or 1) - 1, 0),
                        _message(item.get("message", "invalid syntax")),
                    )
                    if path is not None and (path not in found or problem < found[path]):
                        found[path] = problem
        finally:
            self.close()
        return found

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def _chunks(paths: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for path in paths:
        if current and size + len(path) + 1 > _MAX_ARGUMENT_CHARS:
            chunks.append(current)
            current, size = [], 0
        current.append(path)
        size += len(path) + 1
    if current:
        chunks.append(current)
    return chunks


def _relative(filename: str, relative: dict[str, str], root: Path) -> str | None:
    key = os.path.normcase(filename)
    if key in relative:
        return relative[key]
    try:  # ruff resolved a symlinked root: compare real paths
        real = os.path.relpath(os.path.realpath(filename), os.path.realpath(root))
    except ValueError:
        return None
    path = Path(real).as_posix()
    return path if os.path.normcase(os.path.join(root, path)) in relative else None


def _message(text: str) -> str:
    """ruff's message without its older ``SyntaxError: `` prefix."""
    return text.removeprefix("SyntaxError: ")
