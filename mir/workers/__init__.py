"""The fleet's workers: submitted decisions taken from Postgres and decided, each once
(``mir worker``; public interface)."""

from typing import TYPE_CHECKING, Any

from mir.workers.settings import WorkerSettings, attempt_id

if TYPE_CHECKING:
    from mir.workers.deciding import JobDecider
    from mir.workers.running import WorkerPlan, plan_workers, run_workers, serve_workers, work

_RUNNING = frozenset({"WorkerPlan", "plan_workers", "run_workers", "serve_workers", "work"})


def __getattr__(name: str) -> Any:
    # deciding loads the runtime (~0.1 s): not for `mir schema`, which reads the settings
    if name == "JobDecider":
        from mir.workers import deciding

        return deciding.JobDecider
    if name in _RUNNING:
        from mir.workers import running

        return getattr(running, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JobDecider",
    "WorkerPlan",
    "WorkerSettings",
    "attempt_id",
    "plan_workers",
    "run_workers",
    "serve_workers",
    "work",
]
