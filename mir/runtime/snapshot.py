"""The frozen, hashed view of the world a decision is made on (pipeline step 1).

The hash is computed over canonical JSON (sorted keys, no whitespace, no NaN) so that
the same state hashes the same in every process; the re-check before execution compares
it with a fresh hash of the world, and the idempotency key reuses the same encoding.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, compact separators, no NaN/Infinity."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_hex(value: Any) -> str:
    """Hash of the canonical spelling. World state may hold values JSON cannot (a
    datetime, a NaN from a sensor): the hash only needs to be deterministic, so those
    are spelled with ``str`` / ``NaN`` instead of failing the decision."""
    try:
        text = _spelling(value)
    except (ValueError, TypeError, RecursionError, OverflowError):
        # Mixed key types, a 5,000-digit number, nesting past the recursion limit: the
        # pipeline bounds these before hashing, and a hash must never crash anyway.
        text = _spelling(_plain(value, 0))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def _plain(value: Any, depth: int) -> Any:
    """A deterministic stand-in JSON can always spell: string keys, bounded depth and
    integers, ``str`` for the rest (equal values still hash equal across processes)."""
    if depth > 64:
        return "<deep>"
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<int {value.bit_length()} bits {value % 1_000_000_007}>"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _spelling(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def freeze(value: Any) -> Any:
    """A read-only deep copy: mappings become MappingProxyType, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Plain dicts/lists again (for JSON, templates and executors)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def reduce_to_scope(data: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """Keep only the fields the contract lets the agent see (least privilege: a field
    the contract does not list never reaches the prompt, so an empty list shows none)."""
    return {k: v for k, v in data.items() if k in fields}


@dataclass(frozen=True)
class ContextSnapshot:
    """Input and world state as of the decision, immutable and hashed.

    ``state_hash`` covers the whole context (any change in the world makes a decision
    stale, even in fields the agent cannot see); ``visible_*`` are what the prompt shows.
    """

    input: Mapping[str, Any]
    context: Mapping[str, Any]
    visible_input: Mapping[str, Any]
    visible_context: Mapping[str, Any]
    state_hash: str
    snapshot_hash: str

    @classmethod
    def take(
        cls,
        input: Mapping[str, Any],
        context: Mapping[str, Any],
        *,
        input_scope: Sequence[str] = (),
        context_scope: Sequence[str] = (),
    ) -> ContextSnapshot:
        plain_input, plain_context = thaw(input), thaw(context)
        return cls(
            input=freeze(plain_input),
            context=freeze(plain_context),
            visible_input=freeze(reduce_to_scope(plain_input, input_scope)),
            visible_context=freeze(reduce_to_scope(plain_context, context_scope)),
            state_hash=state_hash(plain_context),
            snapshot_hash=sha256_hex({"input": plain_input, "context": plain_context}),
        )


def state_hash(context: Mapping[str, Any]) -> str:
    return sha256_hex(thaw(context))
