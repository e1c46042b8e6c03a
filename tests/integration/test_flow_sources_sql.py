"""Which flows count as production, over every way a store may hold a flow's source:
written by today's runtime (snapshot and final), by a runtime from before finals carried
it (snapshot only), from before sources were explicit (neither), or hostile values."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from mir.traces import FlowFilter, TraceEvent, TraceStore, production_finals

# ((snapshot's source, final's source), counted as production?)
_ABSENT = object()
CASES = [
    (("production", "production"), True),
    ((_ABSENT, _ABSENT), True),  # before sources were explicit: production
    ((_ABSENT, "production"), True),  # a final from before snapshots named production
    (("eval", _ABSENT), False),  # a legacy eval flow: its snapshot says so
    (("shadow", _ABSENT), False),
    (("eval", "eval"), False),
    (("shadow", "shadow"), False),
    (("replay", "replay"), False),
    ((_ABSENT, "replay"), False),  # the final decides when it names a source
    (("production", _ABSENT), True),
    ((_ABSENT, ["production"]), False),  # not a source at all: never evidence
    ((_ABSENT, None), True),  # a null is no source: the snapshot's (none) holds
    (('production" ', _ABSENT), False),
]


def _flow(n: int, snapshot_source: Any, final_source: Any) -> list[TraceEvent]:
    flow_id = f"f{n:04d}"
    snapshot: dict[str, Any] = {"input": {}}
    if snapshot_source is not _ABSENT:
        snapshot["source"] = snapshot_source
    final: dict[str, Any] = {"record": {"flow_id": flow_id}}
    if final_source is not _ABSENT:
        final["source"] = final_source
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent="a.b", data=snapshot),
        TraceEvent(flow_id=flow_id, seq=1, step="final", agent="a.b", data=final),
    ]


@pytest.mark.parametrize("compacted", [False, True])
def test_production_finals_keep_exactly_the_production_flows(tmp_path: Path, compacted):
    store = TraceStore(tmp_path / "traces", environ={})
    expected = set()
    events = []
    for n, ((snap, final), counted) in enumerate(CASES):
        events += _flow(n, snap, final)
        if counted:
            expected.add(f"f{n:04d}")
    store.append(events)
    if compacted:
        store.compact()
    with store.analysis() as (con, sql, _):
        rows = con.execute(f"SELECT flow_id FROM ({production_finals(sql)})").fetchall()
    listed = {f.flow_id: f.source for f in store.list_flows(limit=100)}
    store.close()
    assert {r[0] for r in rows} == expected
    # traces list names the same flows production
    assert {k for k, v in listed.items() if v == "production"} >= expected


def test_the_export_filter_keeps_whole_flows_of_every_source_combination(tmp_path: Path):
    store = TraceStore(tmp_path / "traces", environ={})
    sources = ("production", "eval", "shadow", "replay")
    for n, source in enumerate(sources):
        store.append(_flow(n, source, source))
    for k in range(1, len(sources) + 1):
        for chosen in itertools.combinations(sources, k):
            kept = list(store.events(FlowFilter(sources=chosen)))
            assert {e.flow_id for e in kept} == {f"f{sources.index(s):04d}" for s in chosen}
            assert len(kept) == 2 * len(chosen)  # snapshot and final of each
    assert list(store.events(FlowFilter(agent="nobody"))) == []
    store.close()
