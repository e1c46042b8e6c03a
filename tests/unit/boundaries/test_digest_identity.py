"""The lint caches know a file by its identity (dev, inode, size, mtime, ctime): a
same-size edit whose mtime was put back, or a file replaced by another, is read again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from mir.boundaries.application import content_key, digest_files
from mir.boundaries.cache import FileParseCache, code_fingerprint
from mir.boundaries.files import FileSystemSource
from mir.boundaries.ruff_syntax import checker_tag, same_ruff
from tests.support.file_identity import replace_keeping_mtime, rewrite_keeping_mtime

EDITS = [
    pytest.param(lambda path, data: path.write_bytes(data + b"# more\n"), id="edited"),
    pytest.param(rewrite_keeping_mtime, id="same size, mtime put back"),
    pytest.param(replace_keeping_mtime, id="replaced, same size and mtime"),
]


def _digests(root: Path, folder: Path) -> tuple[list[str], dict[str, bytes]]:
    source = FileSystemSource(root, "app")
    layout = source.layout(SimpleNamespace(exclude=[]))  # type: ignore[arg-type]
    cache = FileParseCache(folder)
    digests, read = digest_files(layout.files, source, cache)
    cache.save()
    return digests, read


@pytest.mark.parametrize("edit", EDITS)
def test_the_parse_cache_rehashes_a_changed_file(tmp_path: Path, edit) -> None:
    module = tmp_path / "app" / "billing" / "core.py"
    module.parent.mkdir(parents=True)
    (module.parent / "__init__.py").write_bytes(b"")
    module.write_bytes(b"import json\n")
    cache = tmp_path / ".mir" / "cache"
    first, _ = _digests(tmp_path, cache)
    again, read = _digests(tmp_path, cache)
    assert again == first and read == {}  # unchanged: nothing read
    edit(module, b"import yaml\n")
    after, read = _digests(tmp_path, cache)
    assert list(read) == ["app/billing/core.py"]
    assert content_key(module.read_bytes()) in after and after != first


@pytest.mark.parametrize("edit", EDITS[1:])
def test_a_replaced_ruff_binary_is_another_checker(tmp_path: Path, edit) -> None:
    binary = tmp_path / "ruff"
    binary.write_bytes(b"#!/bin/sh\nexit 0\n")
    tag = checker_tag(str(binary))
    assert same_ruff(tag)
    edit(binary, b"#!/bin/sh\nexit 1\n")
    assert not same_ruff(tag)


@pytest.mark.parametrize("edit", EDITS)
def test_editing_the_linter_code_changes_its_fingerprint(tmp_path: Path, edit) -> None:
    code = tmp_path / "rules"
    code.mkdir()
    rule = code / "rule.py"
    rule.write_bytes(b"CODE = 'MIR101'\n")
    before = code_fingerprint("tag", [code])
    assert code_fingerprint("tag", [code]) == before
    edit(rule, b"CODE = 'MIR102'\n")
    assert code_fingerprint("tag", [code]) != before


def test_a_moved_checkout_is_rehashed_but_parses_nothing_again(tmp_path: Path) -> None:
    """Content keys survive a fresh checkout: only the digests are recomputed."""
    first_root = tmp_path / "one"
    module = first_root / "app" / "billing" / "core.py"
    module.parent.mkdir(parents=True)
    (module.parent / "__init__.py").write_bytes(b"")
    module.write_bytes(b"import json\n")
    cache = tmp_path / "cache"
    first, _ = _digests(first_root, cache)
    second_root = tmp_path / "two"
    shutil.copytree(first_root, second_root)
    for path in second_root.rglob("*.py"):
        stat = os.stat(first_root / path.relative_to(second_root))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again, read = _digests(second_root, cache)
    assert again == first and len(read) == 2  # read (new inodes), same content keys
