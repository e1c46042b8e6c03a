"""The flows a human reviewed, read from the traces: what the model proposed, what the
reviewer said (approve, reject, or approve with a correction), and what the case and the
fine-tuning line are built from (the snapshot's input and world, the first prompt).

Reviewed means: a ``review`` event with verdict ``approve`` or ``reject`` (a replay is
no verdict) and a ``final`` event (the flow ended), in a production or replay flow. The
candidates are found in SQL; only their events are parsed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mir.reviews.domain import json_object
from mir.traces import REDACTED

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

Verdict = Literal["approved", "rejected", "corrected"]

_STEPS = "'snapshot', 'infer', 'review', 'final'"
_REVIEWED = """
SELECT flow_id FROM ({events}) WHERE step = 'review'
  AND json_extract_string(data, '$.verdict') IN ('approve', 'reject')
INTERSECT
SELECT flow_id FROM ({finals})
"""


@dataclass(frozen=True)
class ReviewedFlow:
    flow_id: str
    agent: str
    verdict: Verdict
    by: str
    at: str
    contract: str  # the contract ref the flow's snapshot recorded
    input: dict[str, Any]
    context: dict[str, Any] | None
    proposal: dict[str, Any]  # what the model proposed
    decision: dict[str, Any]  # what the human settled on (the proposal, or the correction)
    correction: dict[str, Any] | None
    prompt: str | None  # the first model call's rendered prompt (redacted), if whole
    status: str  # the flow's final status

    @property
    def redacted(self) -> bool:
        """A value the traces kept as ``[REDACTED]``: not the text the model saw."""
        return REDACTED in json.dumps([self.input, self.context, self.decision], default=str)


def reviewed_flows(
    con: duckdb.DuckDBPyConnection, events: EventsSql, agent: str | None = None
) -> list[ReviewedFlow]:
    """Every reviewed flow (of ``agent``), oldest first."""
    params: dict[str, Any] = {}
    scope = "true"
    if agent is not None:
        scope, params["agent"] = "agent = $agent", agent
    ids_sql = _REVIEWED.format(
        events=events(f"step = 'review' AND {scope}"), finals=events(f"step = 'final' AND {scope}")
    )
    steps = events(f"step IN ({_STEPS}) AND {scope}")
    rows = con.execute(
        f"SELECT flow_id, seq, step, agent, status, data FROM ({steps}) "
        f"WHERE flow_id IN ({ids_sql}) ORDER BY flow_id, seq",
        params,
    ).fetchall()
    by_flow: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_flow.setdefault(row[0], []).append(row)
    flows = [f for f in (_flow(flow_id, found) for flow_id, found in by_flow.items()) if f]
    return sorted(flows, key=lambda f: (f.at, f.flow_id))


def _flow(flow_id: str, rows: list[tuple[Any, ...]]) -> ReviewedFlow | None:
    snapshot: dict[str, Any] | None = None
    prompt: str | None = None
    review: dict[str, Any] | None = None
    final: dict[str, Any] | None = None
    status = ""
    agent = rows[0][3]
    for _flow_id, _seq, step, _agent, row_status, text in rows:
        data = json_object(text)
        if step == "snapshot":
            snapshot = data
        elif step == "infer" and prompt is None:
            traced = data.get("prompt")
            if isinstance(traced, dict) and "text_chars" not in traced:  # not cut
                prompt = traced.get("text") if isinstance(traced.get("text"), str) else None
        elif step == "review" and data.get("verdict") in ("approve", "reject"):
            review = data
        elif step == "final":
            final, status = data, str(row_status or "")
    if snapshot is None or review is None or final is None:
        return None
    if snapshot.get("source") in ("eval", "shadow"):
        return None
    record = final.get("record") if isinstance(final.get("record"), dict) else {}
    decided = record.get("decision") if isinstance(record.get("decision"), dict) else None
    if decided is None:
        return None
    correction = review.get("correction") if isinstance(review.get("correction"), dict) else None
    overridden = bool(final.get("human_override")) and isinstance(final.get("proposal"), dict)
    proposal = dict(final["proposal"]) if overridden else dict(decided)
    verdict: Verdict = (
        "rejected"
        if review["verdict"] == "reject"
        else "corrected"
        if overridden or correction
        else "approved"
    )
    if verdict == "corrected" and not overridden:  # an approval with a correction that
        decided = {**decided, **(correction or {})}  # ended before it executed (stale)
    context = snapshot.get("context")
    return ReviewedFlow(
        flow_id=flow_id,
        agent=str(agent),
        verdict=verdict,
        by=str(review.get("by", "")),
        at=str(review.get("at", "")),
        contract=str(snapshot.get("contract", "")),
        input=dict(snapshot.get("input") or {}),
        context=dict(context) if isinstance(context, dict) else None,
        proposal=proposal,
        decision=dict(decided),
        correction=dict(correction) if correction else None,
        prompt=prompt,
        status=status,
    )
