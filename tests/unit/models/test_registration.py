"""Registering a version: one use case that validates, hashes the GGUF once, and adds
the entry; the integrity check before the first load reuses that digest."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.inference import DIGEST_CACHE, FILE_HASHER, FileHasher
from mir.models import read_registry, register_version
from tests.support.tiny_gguf import write_tiny_gguf


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "models").mkdir()
    write_tiny_gguf(tmp_path / "models" / "a.gguf")
    return tmp_path


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the bytes read from the model file by every hashing path."""
    read: list[int] = []
    real = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        chunk = real(fd, size, offset)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "pread", counting)
    return read


def test_the_artifact_is_hashed_once_and_the_first_load_check_reads_it_no_more(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = root / "models" / "a.gguf"
    size = path.stat().st_size
    FILE_HASHER.clear()
    before = FILE_HASHER.hashes
    read = _reads(monkeypatch)
    entry = register_version(root, name="qwen", version="1", artifact="models/a.gguf", by="ana")
    assert FILE_HASHER.hashes == before + 1
    assert sum(read) == size  # every byte read once: one hash, no second pass
    assert entry.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    registry = read_registry(root)
    assert registry is not None and registry.get("qwen", "1") == entry
    # The next process's integrity check before loading finds the digest in the cache.
    read.clear()
    fresh = FileHasher()
    fresh.verify(path, entry.sha256, root / DIGEST_CACHE)
    assert fresh.hashes == 0 and read == []


def test_a_file_changed_after_registration_is_hashed_again_and_refused(root: Path) -> None:
    path = root / "models" / "a.gguf"
    entry = register_version(root, name="qwen", version="1", artifact="models/a.gguf", by="ana")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    fresh = FileHasher()
    with pytest.raises(Exception, match="model integrity"):
        fresh.verify(path, entry.sha256 or "", root / DIGEST_CACHE)
    assert fresh.hashes == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"provider": "ollama"}, "--provider: unknown provider 'ollama'"),
        ({"artifact": "models/missing.gguf"}, "--artifact: no file"),
        ({"queue": -1}, "queue:"),
        ({"notes": "key sk-abcdefghijklmnopqrstuvwxyz0123456789"}, "--notes looks like"),
    ],
)
def test_a_refused_registration_reads_no_file_and_leaves_no_registry(
    root: Path, fields: dict, message: str
) -> None:
    FILE_HASHER.clear()
    before = FILE_HASHER.hashes
    args = {"name": "qwen", "version": "1", "artifact": "models/a.gguf", "by": "ana", **fields}
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        register_version(root, **args)
    assert read_registry(root) is None
    assert FILE_HASHER.hashes == before  # refused before the file is read
