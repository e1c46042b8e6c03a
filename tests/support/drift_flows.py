"""One decision flow as the drift tests store it: a snapshot and a final event, the final
as the runtime writes it (the record, and beside it the source, contract and prompts) or
as a store from before those were written there (``legacy``: the snapshot alone says
where the flow came from)."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from mir.traces import TraceEvent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_desk"


def desk(folder: Path) -> Path:
    """A copy of the support desk example (no traces) in ``folder``."""
    root = folder / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return root


def db(root: Path) -> Path:
    """The trace database of the project at ``root``."""
    return root / ".mir" / "traces" / "traces.duckdb"


def decision_flow(
    flow_id: str,
    agent: str,
    at: datetime,
    record: Any,
    *,
    source: str | None = None,
    legacy: bool = False,
    contract: str = "c1",
    prompts: list[str] | None = None,
    final_after: timedelta = timedelta(seconds=1),
    **final: Any,
) -> list[TraceEvent]:
    """``source`` None: a production flow; ``prompts`` None: a final that lists none."""
    snapshot: dict[str, Any] = {"contract_hash": contract, "input": {"flow": flow_id}}
    if source:
        snapshot["source"] = source
    data: dict[str, Any] = {"record": record}
    if not legacy:
        data |= {"source": source or "production", "contract_hash": contract}
        if prompts is not None:
            data["prompt_hashes"] = prompts
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent=agent, at=at, data=snapshot),
        TraceEvent(
            flow_id=flow_id,
            seq=1,
            step="final",
            agent=agent,
            at=at + final_after,
            data=data,
            **final,
        ),
    ]
