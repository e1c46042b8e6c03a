"""A GGUF file's trained context length, read from its header without llama.cpp.

Why: a context window is allocated by llama.cpp when the model loads, from whatever
``n_ctx`` it is given; ``--context 99999999999`` wrapped to 32 bits and asked for 1.2 G
tokens. The model's own ``<arch>.context_length`` (what it was trained on) is the bound,
and it has to be known before the load: at ``mir models register`` and when a provider
is built. Reading it needs only the header's key/value section (GGUF v2/v3: magic,
version, tensor and key counts, then typed key/value pairs), so this is a small stdlib
reader rather than a dependency (``gguf`` is a test-only package) or a model load.

The reader is defensive: every length is checked against the file's size before it is
trusted, and anything unexpected (not GGUF, an old v1 file, a truncated header, no such
key) gives None: the caller then leaves the file to llama.cpp, which reports it.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"
# Scalar value types of GGUF's key/value section -> their size in bytes.
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_INTEGERS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}
_STRING, _ARRAY = 8, 9
_MAX_KEYS = 1 << 20  # a real model has dozens


class _Bad(Exception):
    """The header is not what GGUF says it should be."""


def trained_context(path: Path) -> int | None:
    """``<general.architecture>.context_length`` of the GGUF at ``path``, or None."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            return _read(_Reader(handle, size))
    except (OSError, _Bad, struct.error, UnicodeDecodeError):
        return None


class _Reader:
    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size

    def take(self, count: int) -> bytes:
        if count < 0 or self.handle.tell() + count > self.size:
            raise _Bad("past the end of the file")
        data = self.handle.read(count)
        if len(data) != count:
            raise _Bad("short read")
        return data

    def skip(self, count: int) -> None:
        if count < 0 or self.handle.tell() + count > self.size:
            raise _Bad("past the end of the file")
        self.handle.seek(count, 1)

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.take(8))[0])

    def string(self) -> str:
        return self.take(self.u64()).decode("utf-8")


def _read(reader: _Reader) -> int | None:
    if reader.take(4) != MAGIC or reader.u32() not in (2, 3):
        return None
    reader.u64()  # tensor count
    keys = reader.u64()
    if keys > _MAX_KEYS:
        raise _Bad("implausible key count")
    architecture: str | None = None
    lengths: dict[str, int] = {}
    for _ in range(keys):
        key = reader.string()
        kind = reader.u32()
        if key == "general.architecture" and kind == _STRING:
            architecture = reader.string()
        elif key.endswith(".context_length") and kind in _INTEGERS:
            fmt = _INTEGERS[kind]
            lengths[key] = int(struct.unpack(fmt, reader.take(struct.calcsize(fmt)))[0])
        else:
            _skip_value(reader, kind)
        if architecture is not None and f"{architecture}.context_length" in lengths:
            break
    if architecture is None:
        return None
    value = lengths.get(f"{architecture}.context_length")
    return value if value is not None and value > 0 else None


def _skip_value(reader: _Reader, kind: int) -> None:
    if kind in _SIZES:
        reader.skip(_SIZES[kind])
    elif kind == _STRING:
        reader.skip(reader.u64())
    elif kind == _ARRAY:
        inner, count = reader.u32(), reader.u64()
        if inner in _SIZES:
            reader.skip(count * _SIZES[inner])
        elif inner == _STRING:
            if count * 8 > reader.size:  # each string costs at least its 8-byte length
                raise _Bad("implausible array")
            for _ in range(count):
                reader.skip(reader.u64())
        else:
            raise _Bad(f"array of type {inner}")  # nested arrays: not in real models
    else:
        raise _Bad(f"unknown value type {kind}")
