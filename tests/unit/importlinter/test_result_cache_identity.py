"""The import-linter cache re-hashes (and re-extracts) a file whose identity changed,
even when a same-size edit put its mtime back."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.importlinter.adapters.result_cache import ContractCache
from tests.support.file_identity import replace_keeping_mtime, rewrite_keeping_mtime


def _digest(folder: Path, path: Path) -> tuple[str, bool]:
    cache = ContractCache(folder)
    digest = cache.digest(path)
    was_read = str(path) in cache._read  # read to hash it, kept for the extraction
    cache.save()
    return digest, was_read


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda path, data: path.write_bytes(data + b"\n"), id="edited"),
        pytest.param(rewrite_keeping_mtime, id="same size, mtime put back"),
        pytest.param(replace_keeping_mtime, id="replaced, same size and mtime"),
    ],
)
def test_a_changed_file_is_read_and_hashed_again(tmp_path: Path, edit) -> None:
    module = tmp_path / "app" / "core.py"
    module.parent.mkdir()
    module.write_bytes(b"import json\n")
    folder = tmp_path / ".mir" / "cache"
    first, read = _digest(folder, module)
    assert read
    assert _digest(folder, module) == (first, False)  # the next run: from the index
    edit(module, b"import yaml\n")
    after, read = _digest(folder, module)
    assert read and after != first
    assert _digest(folder, module) == (after, False)
