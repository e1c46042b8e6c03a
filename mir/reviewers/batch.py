"""Verifying many Ed25519 signatures at once (``mir traces verify`` on a store it has not
verified before, or ``--full``): one signature costs ~0.1-0.2 ms of one core, so past a
few thousand they are split over forked worker processes, one per core this process may
use and nothing else keeps busy. Each worker reads its share of the list from the memory
it inherited (nothing is pickled but the answers); where ``fork`` is not available, or
with one idle core, the signatures are verified here, one after the other.
"""

from __future__ import annotations

import base64
import binascii
import functools
import multiprocessing
import os
from collections.abc import Sequence
from typing import Any

from mir.reviewers.domain import KEY_PREFIX, PUBLIC_KEY

PARALLEL_MIN = 4000  # below this, starting workers costs more than it saves
Check = tuple[str, bytes, str]  # (declared public key, canonical statement, signature)

_CHECKS: Sequence[Check] = ()  # what forked workers verify (inherited, never pickled)


@functools.lru_cache(maxsize=1024)
def public_key_object(public_key: str) -> Any | None:
    """cryptography's key for ``ed25519:<base64>`` (made once per key), None when invalid."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not PUBLIC_KEY.match(public_key):
        return None
    try:
        raw = base64.b64decode(public_key.removeprefix(KEY_PREFIX), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, binascii.Error):
        return None


def verify_one(public_key: str, message: bytes, signature: str) -> bool:
    from cryptography.exceptions import InvalidSignature

    key = public_key_object(public_key)
    if key is None or not signature or not isinstance(signature, str):
        return False
    try:
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def _verify_range(bounds: tuple[int, int]) -> list[bool]:
    return [verify_one(*check) for check in _CHECKS[bounds[0] : bounds[1]]]


def workers() -> int:
    """The cores this process may use that other work leaves idle (the load average
    counts this process as one): on a machine already busy, workers only take turns."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        idle = round(cores - os.getloadavg()[0] + 1)
    except OSError:
        idle = cores
    return max(1, min(cores, idle, 8))


def worth_workers(count: int) -> bool:
    """Whether ``verify_many`` would split ``count`` signatures over worker processes."""
    forks = "fork" in multiprocessing.get_all_start_methods()
    return count >= PARALLEL_MIN and workers() > 1 and forks


def verify_many(checks: Sequence[Check]) -> list[bool]:
    """Whether each signature verifies, in order."""
    global _CHECKS
    if not worth_workers(len(checks)):
        return [verify_one(*check) for check in checks]
    step = -(-len(checks) // workers())
    bounds = [(start, min(start + step, len(checks))) for start in range(0, len(checks), step)]
    from concurrent.futures import ProcessPoolExecutor  # only when it forks workers

    _CHECKS = checks
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=len(bounds), mp_context=context) as pool:
            return [ok for part in pool.map(_verify_range, bounds) for ok in part]
    finally:
        _CHECKS = ()
