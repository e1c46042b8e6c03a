"""What ``mir traces show`` says about a flow's reviews, in words (from its events)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mir.traces.domain import TraceEvent


def flow_review_lines(events: Sequence[TraceEvent]) -> list[str]:
    """One line per review (who, verdict, signed or not, correction) and the override."""
    lines = []
    for event in events:
        data = event.data or {}
        if event.step == "review" and "by" in data:
            signed = "signed" if data.get("signature") else "unsigned"
            count = data.get("approvals")
            have = (
                f", {count.get('have')} of {count.get('need')}" if isinstance(count, dict) else ""
            )
            line = f"review: {data.get('verdict')} by {data.get('by')} ({signed}{have})"
            if data.get("correction"):
                line += f", correction {json.dumps(data['correction'], ensure_ascii=False)}"
            lines.append(line)
        if event.step == "final" and data.get("human_override"):
            record = data.get("record") or {}
            lines.append(
                "human override: executed "
                f"{json.dumps(record.get('decision'), ensure_ascii=False)} instead of the "
                f"model's {json.dumps(data.get('proposal'), ensure_ascii=False)}"
            )
    return lines
