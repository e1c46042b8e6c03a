"""The test model writer: small, reproducible, and carrying what llama.cpp needs."""

from pathlib import Path

import gguf

from tests.support.tiny_gguf import CHAT_TEMPLATE, write_tiny_gguf


def _field(reader: gguf.GGUFReader, key: str) -> object:
    return reader.fields[key].contents()


def test_it_is_small_and_reproducible(tmp_path: Path) -> None:
    one = write_tiny_gguf(tmp_path / "one.gguf")
    two = write_tiny_gguf(tmp_path / "two.gguf")
    other = write_tiny_gguf(tmp_path / "other.gguf", seed=1)
    assert one.stat().st_size < 1_000_000
    assert one.read_bytes() == two.read_bytes()
    assert one.read_bytes() != other.read_bytes()


def test_it_has_llama_metadata_a_byte_vocab_and_a_chat_template(tmp_path: Path) -> None:
    reader = gguf.GGUFReader(write_tiny_gguf(tmp_path / "m.gguf"))
    assert _field(reader, "general.architecture") == "llama"
    assert _field(reader, "tokenizer.ggml.model") == "llama"
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert {f"<0x{b:02X}>" for b in range(256)} <= set(tokens)
    assert _field(reader, "tokenizer.chat_template") == CHAT_TEMPLATE


def test_the_template_can_be_left_out(tmp_path: Path) -> None:
    reader = gguf.GGUFReader(write_tiny_gguf(tmp_path / "m.gguf", chat_template=None))
    assert "tokenizer.chat_template" not in reader.fields
