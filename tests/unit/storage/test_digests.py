"""The stat-keyed digest cache: reuses a digest only while the file is the same file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.storage import DigestCache, identity
from tests.support.file_identity import replace_keeping_mtime, rewrite_keeping_mtime


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=3 * (1 << 20) // 2))
def test_the_digest_is_the_sha256_of_the_bytes_by_path_and_by_descriptor(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.gguf"
        path.write_bytes(data)
        expected = hashlib.sha256(data).hexdigest()
        assert DigestCache().digest(path) == expected
        fd = os.open(path, os.O_RDONLY)
        try:
            assert DigestCache().digest_descriptor(fd, str(path), os.fstat(fd)) == expected
        finally:
            os.close(fd)


def test_an_unchanged_file_is_hashed_once(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n")
    cache = DigestCache()
    assert cache.digest(path) == cache.digest(path)
    assert cache.hashes == 1
    assert cache.read(path) == (hashlib.sha256(b"x = 1\n").hexdigest(), None)


@pytest.mark.parametrize(
    "edit",
    [
        lambda path: path.write_bytes(b"x = 22\n"),
        lambda path: rewrite_keeping_mtime(path, b"x = 2\n"),
        lambda path: replace_keeping_mtime(path, b"x = 3\n"),
    ],
    ids=["edited", "same size, mtime put back (new ctime)", "replaced (new inode)"],
)
def test_a_changed_file_is_hashed_again(tmp_path: Path, edit) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n")
    cache = DigestCache()
    cache.digest(path)
    edit(path)
    digest, data = cache.read(path)
    assert data == path.read_bytes()
    assert digest == hashlib.sha256(data).hexdigest()
    assert cache.hashes == 2


def test_persisted_entries_serve_the_next_process_and_prune_drops_the_unused(
    tmp_path: Path,
) -> None:
    kept, gone = tmp_path / "kept.py", tmp_path / "gone.py"
    kept.write_bytes(b"a")
    gone.write_bytes(b"b")
    first = DigestCache(algorithm="blake2b", digest_size=16)
    first.digest(kept), first.digest(gone)
    saved = dict(first.entries)  # what an owner marshals
    assert saved[str(kept)][:-1] == identity(os.stat(kept))
    again = DigestCache(saved, algorithm="blake2b", digest_size=16)
    assert again.digest(kept) == hashlib.blake2b(b"a", digest_size=16).hexdigest()
    assert again.hashes == 0
    assert again.prune() is True  # gone.py was not looked up
    assert list(again.entries) == [str(kept)]
    again.digest(kept)
    assert again.prune() is False


def test_a_damaged_persisted_entry_is_a_miss_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"a")
    ident = identity(os.stat(path))
    for damaged in ["text", (1, 2), (*ident, 7), None]:
        cache = DigestCache({str(path): damaged})  # type: ignore[dict-item]
        assert cache.known(str(path), ident) is None
        assert cache.digest(path) == hashlib.sha256(b"a").hexdigest()


def test_a_missing_file_raises_like_open(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        DigestCache().digest(tmp_path / "absent")
