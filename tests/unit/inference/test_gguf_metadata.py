"""The GGUF header reader behind the context bound: real headers, cut ones, noise."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.inference.gguf_metadata import trained_context
from tests.support.tiny_gguf import N_CTX


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=256))
def test_the_header_reader_never_raises_on_hostile_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("h") / "x.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + data)
    assert trained_context(path) is None or trained_context(path) > 0


def test_the_header_reader_reads_a_real_header_and_refuses_a_truncated_one(tmp_path, tiny_gguf):
    assert trained_context(tiny_gguf) == N_CTX
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_gguf.read_bytes()[:40])
    assert trained_context(cut) is None


def test_an_unchosen_context_stays_within_a_small_model_and_a_chosen_one_is_checked(tmp_path):
    # The default (2048) on a model trained on 1024 is held to 1024, as llama.cpp itself
    # would be asked for; a window someone set past it is their config error.
    from mir.contracts import Route
    from mir.errors import ConfigError
    from mir.inference import ModelSettings, provider_for
    from tests.support.tiny_gguf import write_tiny_gguf

    small = write_tiny_gguf(tmp_path / "small.gguf", context=1024)
    route = Route(name="local", provider="llama", model=str(small))
    assert provider_for(route).n_ctx == 1024
    assert provider_for(route, settings=ModelSettings.model_validate({"n_ctx": 512})).n_ctx == 512
    with pytest.raises(ConfigError, match="trained on 1024"):
        provider_for(route, settings=ModelSettings.model_validate({"n_ctx": 2048}))
    with pytest.raises(ConfigError, match="trained on 1024"):
        provider_for(route.model_copy(update={"n_ctx": 4096}))
