"""Storage: how every capability writes files (atomically, under locks) and hashes them."""

from mir.storage.atomic import atomic_file, write_atomic

__all__ = ["atomic_file", "write_atomic"]
