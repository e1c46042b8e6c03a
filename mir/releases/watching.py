"""``mir drift watch``: the rolling breaker, each tick followed by the canaries' rollback
check. One use case: the CLI hands it two callbacks and renders what they get.

A problem with the canaries (a broken ``models.toml``, a locked history) is reported to
``on_canaries`` as text and the watch goes on: the breaker keeps watching the agents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mir.releases.rollback import CanaryCheck, check_canaries

if TYPE_CHECKING:
    from mir.drift import DriftReport, WindowOptions


def watch_with_canaries(
    project: Path | None,
    agents: Sequence[str],
    options: WindowOptions,
    every: float,
    iterations: int | None,
    on_report: Callable[[DriftReport], None],
    on_canaries: Callable[[CanaryCheck | None, str | None], None],
) -> int:
    """``mir.drift.watch``; after each tick's report (``on_report``, before the canaries
    are compared, so the breaker's verdict shows first) the canaries are checked and
    rolled back when worse: ``on_canaries(result, None)``, or ``(None, why)`` when the
    check failed. Returns the watch's exit code (1 when an agent was past a suspend level)."""
    from mir.drift import watch

    def tick(report: DriftReport) -> None:
        on_report(report)
        try:
            result = check_canaries(project)
        except Exception as exc:  # the breaker keeps watching the agents
            on_canaries(None, str(exc))
            return
        on_canaries(result, None)

    return watch(project, agents, options, every, iterations, tick)
