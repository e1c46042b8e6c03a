"""Storage: how every capability writes files (atomically, under locks) and hashes them."""

from mir.storage.atomic import atomic_file, write_atomic
from mir.storage.digests import DigestCache, Identity, identity
from mir.storage.flock import file_lock, lock_descriptor

__all__ = [
    "DigestCache",
    "Identity",
    "atomic_file",
    "file_lock",
    "identity",
    "lock_descriptor",
    "write_atomic",
]
