"""The servers a remote model call may reach, and the queue each one gets.

Back-pressure: one ``Scheduler`` per (api_base, model) per process (``REMOTE_SCHEDULERS``,
like llama's ``MODEL_CACHE``). The guard: with ``MIR_BLOCK_REMOTE_MODELS=1`` (set by mir's
test suite) only loopback servers may be called.
"""

from __future__ import annotations

import os
import threading

from mir.errors import ConfigError
from mir.inference.domain import is_loopback_url
from mir.inference.scheduler import Scheduler

BLOCK_ENV = "MIR_BLOCK_REMOTE_MODELS"


class RemoteSchedulers:
    """One ``Scheduler`` per (api_base, model) in this process: every provider, agent and
    thread calling the same server for the same model shares its slots and its queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._schedulers: dict[tuple[str | None, str], Scheduler] = {}

    def get(self, api_base: str | None, model: str, *, capacity: int, queue: int) -> Scheduler:
        """The scheduler for this server and model, sized by the latest caller's settings
        (a reloaded project or a registry entry's ``queue`` resizes it in place)."""
        with self._lock:
            scheduler = self._schedulers.get((api_base, model))
            if scheduler is None:
                scheduler = Scheduler(capacity=capacity, queue=queue)
                self._schedulers[(api_base, model)] = scheduler
            else:
                scheduler.capacity = max(1, capacity)
                scheduler.queue = max(0, queue)
            return scheduler

    def peek(self, api_base: str | None, model: str) -> Scheduler | None:
        with self._lock:
            return self._schedulers.get((api_base, model))

    def clear(self) -> None:
        with self._lock:
            self._schedulers.clear()


REMOTE_SCHEDULERS = RemoteSchedulers()


def remote_models_blocked() -> bool:
    return os.environ.get(BLOCK_ENV, "").strip().lower() in ("1", "true", "yes")


def check_remote_allowed(model: str, api_base: str | None) -> None:
    """Refuse anything but a loopback server while ``MIR_BLOCK_REMOTE_MODELS`` is set."""
    if not remote_models_blocked():
        return
    if api_base is None:
        target = f"hosted model {model!r} (no api_base)"
    elif not is_loopback_url(api_base):
        target = f"{api_base} (not a loopback address)"
    else:
        return
    raise ConfigError(
        f"remote model calls are blocked ({BLOCK_ENV}=1): refusing {target}",
        hint="use a server on 127.0.0.1, the llama provider, or a responses file",
    )
