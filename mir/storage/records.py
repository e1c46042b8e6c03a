"""The records a store hands back to the capabilities, whatever the backend: plain frozen
dataclasses (no I/O), so a second backend builds the same ones."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlowHolder:
    """Who holds a flow's one outcome (approve, reject, replay or its own run) and how far
    they got: ``state`` moves approved/rejected/replaying -> executing -> executed, and
    ``final`` is the flow's final status once its ``final`` event is written."""

    flow_id: str
    state: str
    by: str
    at: str  # when the claim was made (ISO 8601, UTC)
    final: str | None = None
    process: str = ""  # "pid N on HOST": who to look for while the claim is unsettled

    @property
    def status(self) -> str:
        return self.final or self.state


@dataclass(frozen=True)
class FlowClaim:
    """The answer to ``claim_flow``: ``won`` or not, and the holder met. A won claim with
    a ``holder`` took over from a process that died holding it (unsettled)."""

    won: bool
    holder: FlowHolder | None = None
