"""judge: the action executor of both judge agents.

A verdict is information, not a side effect: the executor only hands the verdict back
(mir eval runs the judge in eval mode, where no executor is called at all). It is
idempotent because it changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def record_verdict(params: Mapping[str, Any], *, idempotency_key: str) -> dict[str, Any]:
    """Executor of every verdict (pass, fail, A, B, tie): returns it, changes nothing."""
    return {"idempotency_key": idempotency_key, **params}
