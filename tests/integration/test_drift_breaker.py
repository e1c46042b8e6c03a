"""The in-process breaker: every N decisions, in a background thread, then rules decide."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from mir.drift import Breaker, WindowOptions
from mir.project import find_project
from mir.runtime import list_agents, load_agent
from mir.traces import TraceStore
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"


def test_the_agent_checks_itself_every_n_decisions_and_then_rules_decide(tmp_path):
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    with TraceStore.for_project(find_project(root)) as traces:
        drift_month.load().write_month(traces, end=datetime.now(UTC), per_day=60)
    ticket = json.loads((root / "inputs/blender_broken.json").read_text())
    line = (root / "responses/blender_broken.jsonl").read_text()
    (root / "replies.jsonl").write_text(line * 3)
    options = WindowOptions(window="7d", reference="21d")
    with load_agent(
        "refunds.triage", project=root, provider="scripted", responses=root / "replies.jsonl"
    ) as agent:
        breaker = Breaker(agent, every=2, project=root, options=options)
        first = breaker.decide(ticket)
        assert breaker.wait() is None  # not due yet: no check ran
        second = breaker.decide(ticket)
        report = breaker.wait(timeout=60)
        assert breaker.last_error is None
        assert report is not None and report.past_suspend
        assert {first.provider, second.provider} == {"scripted"}
        third = breaker.decide(ticket)
    assert third.provider == "rules" and "agent_suspended" in third.reasons
    [state] = list_agents(root)
    assert state.state == "suspended" and state.by == "mir drift"
