"""Replaying the last findings of an unchanged project, without validating anything.

A warm ``mir lint boundaries`` used to spend most of its time before looking at a single
file: validating ``[tool.mir]`` with pydantic, importing the rules and the intent-doc
models. None of that can change the answer when the project's inputs are the ones the
last full run saw, so a replay checks exactly those inputs and nothing else:

* the bytes of ``pyproject.toml`` (every setting, ``shared``, the capabilities folder),
  against the digest the last full run recorded with the settings discovery needs;
* the tree, discovered by the same code as a full run: every file's content digest
  (stat first, re-hashing only files whose stat changed, so a fresh checkout is still a
  replay), every capability folder and its intent doc's bytes, the first-party names;
* this linter's own version and the Python version (the cache file's header), and the
  syntax checker (ruff's binary, when ruff checks syntax).

Import-linter verdicts are replayed by their own cache (``mir.importlinter``) and passed
in. Anything else (a changed input, no record, an unreadable file) returns None and the
caller runs the linter, which reports errors the usual way.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mir.boundaries.application import digest_files, finish_report, inputs_key
from mir.boundaries.cache import FileParseCache
from mir.boundaries.files import FileSystemSource
from mir.boundaries.findings import Finding
from mir.boundaries.report import LintReport, LintStats
from mir.errors import MirUserError

if TYPE_CHECKING:
    from mir.boundaries.settings import LintSettings

DEFAULT_CACHE_DIR = ".mir/cache"  # LintSettings.cache_dir's default (a test holds them equal)


@dataclass(frozen=True)
class _RecordedExcludes:
    exclude: list[str]


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def replay_config(
    pyproject: Path,
    capabilities: str,
    settings: LintSettings,
    require_capabilities: bool,
    syntax_tag: str = "python",
) -> tuple:
    """What a full run records for a replay: the pyproject.toml digest, the settings
    that discovery and the baseline need, as the validated settings had them, and the
    syntax checker the run used (installing or upgrading ruff changes the answer)."""
    mode = settings.syntax_checker if settings.syntax_errors else "python"
    try:
        data = pyproject.read_bytes()
    except OSError:
        data = None
    return (
        _digest(data),
        capabilities,
        tuple(settings.exclude),
        settings.baseline,
        require_capabilities,
        mode,
        syntax_tag,
    )


def _same_checker(mode: str, tag: str) -> bool:
    """Would a full run now check syntax with the checker recorded as ``tag``?"""
    if mode == "python":
        return tag == "python"
    from mir.boundaries.ruff_syntax import ruff_binary, same_ruff

    if tag != "python":
        return same_ruff(tag)  # a stat of the recorded binary: no search
    return ruff_binary() is None  # auto mode, and ruff is still not installed


def _cache_dir_setting(data: bytes | None) -> str | None:
    """``[tool.mir.lint] cache_dir`` read without validation (None: cannot tell); the
    recorded pyproject digest is checked afterwards, so a misread only costs a replay."""
    if data is None or b"cache_dir" not in data:
        return DEFAULT_CACHE_DIR
    import tomllib

    try:
        value = tomllib.loads(data.decode("utf-8"))["tool"]["mir"]["lint"]["cache_dir"]
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) else None


def _folder(root: Path, data: bytes | None) -> Path | None:
    setting = _cache_dir_setting(data)
    return None if setting is None else root / setting


def cache_folder(root: Path) -> Path | None:
    """The cache folder ``[tool.mir.lint] cache_dir`` names for the project in ``root``,
    read without validating the settings; None when that cannot be told cheaply."""
    pyproject = root / "pyproject.toml"
    try:
        data = pyproject.read_bytes() if pyproject.is_file() else None
    except OSError:
        return None
    return _folder(root.resolve(), data)


def replay_report(
    root: Path,
    cache_dir: Path | None = None,
    baseline: Path | None = None,
    extra_findings: Iterable[Finding] = (),
    require_capabilities: bool = True,
) -> LintReport | None:
    """The report a full run would give, from the cache, when nothing the last full run
    depended on has changed; None otherwise (then run ``lint_boundaries``).
    ``extra_findings`` and ``require_capabilities`` are ``lint_boundaries``' (the
    import-linter verdicts, replayed by their own cache)."""
    from mir.boundaries.baseline_file import JsonBaselineFile

    started = time.perf_counter()
    root = root.resolve()
    pyproject = root / "pyproject.toml"
    try:
        data = pyproject.read_bytes() if pyproject.is_file() else None
    except OSError:
        return None
    cache_dir = cache_dir or _folder(root, data)
    if cache_dir is None:
        return None
    cache = FileParseCache(cache_dir)
    if cache.replay is None:
        return None
    config, inputs, key = cache.replay
    try:
        recorded_pyproject, capabilities, exclude, baseline_setting, required, mode, tag = config
    except ValueError:  # recorded by an older mir
        return None
    if (
        recorded_pyproject != _digest(data)
        or required != require_capabilities
        or not _same_checker(mode, tag)
    ):
        return None
    source = FileSystemSource(root, capabilities, required)
    try:
        layout = source.layout(_RecordedExcludes(list(exclude)))
        digests, _ = digest_files(layout.files, source, cache)
        if inputs_key(layout, digests, source) != inputs:
            return None
    except (MirUserError, OSError):
        return None
    rows = cache.result(key)
    if rows is None:
        return None
    cache.save()  # a fresh checkout: remember the new stats, so the next run reads nothing
    if baseline is None and baseline_setting:
        baseline = root / baseline_setting
    store = JsonBaselineFile(baseline, baseline.as_posix()) if baseline is not None else None
    stats = LintStats(
        files=len(layout.files),
        capabilities=len(layout.capabilities),
        parsed=0,
        cached=len(layout.files),
    )
    try:
        return finish_report(rows, extra_findings, store, False, stats, started)
    except MirUserError:  # e.g. a damaged baseline: the full run reports it properly
        return None
