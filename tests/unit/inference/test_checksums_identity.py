"""The GGUF sha256 cache (in process and in ``.mir/cache/sha256.json``) hashes a model
again whenever its bytes may have changed, even at the same size and mtime."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mir.inference.checksums import FileHasher
from tests.support.file_identity import replace_keeping_mtime, rewrite_keeping_mtime

OLD, NEW = b"GGUF" + b"\0" * 60, b"GGUF" + b"\1" * 60


@pytest.mark.parametrize("edit", [rewrite_keeping_mtime, replace_keeping_mtime])
@pytest.mark.parametrize("on_disk", [False, True])
def test_a_same_size_same_mtime_change_is_hashed_again(tmp_path: Path, edit, on_disk: bool) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(OLD)
    cache_file = tmp_path / ".mir" / "cache" / "sha256.json" if on_disk else None
    hasher = FileHasher()
    assert hasher.digest(model, cache_file) == hashlib.sha256(OLD).hexdigest()
    assert hasher.digest(model, cache_file) == hashlib.sha256(OLD).hexdigest()
    assert hasher.hashes == 1
    edit(model, NEW)
    assert hasher.digest(model, cache_file) == hashlib.sha256(NEW).hexdigest()
    assert hasher.hashes == 2
    if on_disk:  # a second process trusts the file's entry only for the same identity
        fresh = FileHasher()
        assert fresh.digest(model, cache_file) == hashlib.sha256(NEW).hexdigest()
        assert fresh.hashes == 0


def test_an_edited_model_is_hashed_again(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(OLD)
    hasher = FileHasher()
    hasher.digest(model)
    model.write_bytes(OLD + b"more")
    assert hasher.digest(model) == hashlib.sha256(OLD + b"more").hexdigest()
    assert hasher.hashes == 2
