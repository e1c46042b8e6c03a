"""The bytes llama.cpp loads are the bytes whose sha256 was checked (real llama.cpp on
two tiny random models that answer differently).

The window attacked: after the registered digest matched and before llama.cpp opens the
file. A hook in the model loader swaps the file there (``os.replace``) or writes into it
in place; the checked model must be what loads, or the load is refused."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from mir.inference import FileHasher, LlamaProvider, Message, ModelIntegrityError, ModelRequest
from mir.inference.model_cache import LoadedModel, ModelCache, load_model
from tests.support.tiny_gguf import write_tiny_gguf

pytestmark = pytest.mark.slow  # real llama.cpp loads

REQUEST = ModelRequest(messages=(Message(role="user", content="hello"),), max_tokens=8)


def _answer(path: Path) -> str:
    provider = LlamaProvider(str(path), n_ctx=256, n_threads=1, cache=ModelCache())
    return provider.complete(REQUEST).text


def _says(loaded: LoadedModel) -> str:
    answer = loaded.llama.create_chat_completion(
        messages=[{"role": "user", "content": "hello"}], max_tokens=8, temperature=0, seed=0
    )
    return answer["choices"][0]["message"]["content"]


@pytest.fixture
def models(tmp_path: Path) -> tuple[Path, Path]:
    good = write_tiny_gguf(tmp_path / "good.gguf", seed=0)
    other = write_tiny_gguf(tmp_path / "other.gguf", seed=1)
    assert _answer(good) != _answer(other), "the two test models must answer differently"
    return good, other


def _registered(path: Path, cache: ModelCache) -> LlamaProvider:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return LlamaProvider(
        str(path), n_ctx=256, n_threads=1, cache=cache, sha256=digest, hasher=FileHasher()
    )


def test_a_file_swapped_in_after_the_check_is_never_what_loads(tmp_path, models):
    # Broke: the digest was computed by reading the path, then llama.cpp opened the path
    # again; `mv other.gguf model.gguf` in between loaded the other model unchecked.
    good, other = models
    model = tmp_path / "model.gguf"
    shutil.copy(good, model)
    loaded = []

    def swap_then_load(path, *args):
        os.replace(other, model)  # after the check, before llama.cpp opens anything
        loaded.append(load_model(path, *args))
        return loaded[-1]

    cache = ModelCache(loader=swap_then_load)
    provider = _registered(model, cache)
    # The unlink of the checked inode changes its ctime: the load is refused, though
    # what llama.cpp read was the checked descriptor, not the file swapped in.
    with pytest.raises(ModelIntegrityError, match="changed while it was loaded"):
        provider.complete(REQUEST)
    assert cache.peek(model, n_ctx=256, n_threads=1, chat_format=None) is None
    [read] = loaded
    assert _says(read) == _answer(good)
    # The next load request checks the path again: it now names another file.
    again = LlamaProvider(str(model), n_ctx=256, cache=ModelCache(), sha256=provider.sha256)
    with pytest.raises(ModelIntegrityError, match="expected"):
        again.complete(REQUEST)


def test_the_checked_descriptor_loads_the_checked_bytes_whatever_the_path_names(tmp_path, models):
    good, other = models
    model = tmp_path / "model.gguf"
    shutil.copy(good, model)
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    with FileHasher().verified(model, digest) as checked:
        os.replace(other, model)
        assert _says(load_model(checked.load_path, 256, 1, None)) == _answer(good)
    assert _answer(model) != _answer(good)


def test_a_write_into_the_checked_file_while_it_loads_is_refused(tmp_path, models):
    good, other = models
    model = tmp_path / "model.gguf"
    shutil.copy(good, model)

    def write_then_load(path, *args):
        before = model.stat()
        with model.open("r+b") as handle:  # same inode, same size, mtime put back
            handle.write(other.read_bytes()[: before.st_size])
        os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
        return load_model(path, *args)

    cache = ModelCache(loader=write_then_load)
    provider = _registered(model, cache)
    with pytest.raises(ModelIntegrityError, match="changed while it was loaded"):
        provider.complete(REQUEST)
    assert cache.peek(model, n_ctx=256, n_threads=1, chat_format=None) is None


def test_a_loader_error_names_the_model_file_not_the_descriptor(tmp_path):
    from mir.errors import ConfigError

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    provider = _registered(broken, ModelCache())
    with pytest.raises(ConfigError) as raised:
        provider.loaded()
    assert str(broken) in str(raised.value) and "/proc/self/fd" not in str(raised.value)
