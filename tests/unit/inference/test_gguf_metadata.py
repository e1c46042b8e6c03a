"""The GGUF header reader behind the context bound: real headers, cut ones, noise."""

from __future__ import annotations

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
