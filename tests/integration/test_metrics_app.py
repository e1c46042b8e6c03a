"""``mir.metrics`` in an app's own process: mounted on a starlette app, counting real
decisions of the runtime, the review queue's gauges read at each scrape; an observer
that raises never fails a decision; the HTTP server's address errors."""

from __future__ import annotations

import json
import re
import socket
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.runtime import load_agent
from tests.support.fixtures import free_port
from tests.support.inbox import AGENT, inbox_project, pend, refund

pytest.importorskip("prometheus_client")
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
# scripted answers: a replay (a production-mode run on recorded answers)
ORDER = {"order_id": "A1", "amount": 40, "message": "arrived broken, mail ana@example.com"}


def _sample(text: str, name: str, **labels: str) -> float:
    """One sample's value in an exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and line.split(" ")[0] != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.partition(" ")[0]))
        if found == labels:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _decide(root: Path, times: int) -> list[str]:
    answers = root / "good.jsonl"
    answers.write_text((json.dumps(json.dumps(GOOD)) + "\n") * times)
    with load_agent(AGENT, project=root, provider="scripted", responses=answers) as agent:
        return [agent.decide(ORDER).status for _ in range(times)]


@pytest.fixture
def counting():
    from mir.metrics import start_counting

    stop = start_counting()
    yield
    stop()


def test_an_app_mounts_mir_metrics_and_sees_decisions_and_the_review_queue(
    tmp_path: Path, counting
) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.testclient import TestClient

    from mir.metrics import metrics_app

    root = inbox_project(tmp_path / "app")
    app = Starlette(routes=[Mount("/metrics", app=metrics_app(root))])
    labels = {"agent": AGENT, "status": "executed", "action": "refund", "source": "replay"}
    with TestClient(app) as client:
        before = client.get("/metrics/")
        assert before.status_code == 200
        assert before.headers["content-type"].startswith("text/plain")
        assert _decide(root, 3) == ["executed"] * 3
        pend(root, refund(), refund(30))
        after = client.get("/metrics/").text
        assert client.post("/metrics/").status_code == 405
    assert (
        _sample(after, "mir_decisions_total", **labels)
        - _sample(before.text, "mir_decisions_total", **labels)
        == 3
    )
    assert _sample(after, "mir_reviews_pending") == 2
    assert _sample(after, "mir_reviews_oldest_pending_age_seconds") > 0
    assert _sample(after, "mir_agent_suspended", agent=AGENT) == 0
    assert "ana@example.com" not in after and "arrived broken" not in after
    assert "mir_queue_depth" not in after  # local mode: no fleet queue


def test_an_observer_that_raises_never_fails_a_decision(tmp_path: Path, counting) -> None:
    from prometheus_client import REGISTRY

    from mir.traces import watch

    root = inbox_project(tmp_path / "app")
    labels = {"agent": AGENT, "status": "executed", "action": "refund", "source": "replay"}
    before = REGISTRY.get_sample_value("mir_decisions_total", labels) or 0.0
    unwatch = watch(lambda events: 1 / 0)
    try:
        assert _decide(root, 2) == ["executed", "executed"]
    finally:
        unwatch()
    assert REGISTRY.get_sample_value("mir_decisions_total", labels) == before + 2


def test_the_server_serves_metrics_and_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    from mir.errors import UsageError
    from mir.metrics import bind_metrics

    root = inbox_project(tmp_path / "app")
    server = bind_metrics(f"127.0.0.1:{free_port()}", root)
    try:
        server.start()
        with urllib.request.urlopen(server.url, timeout=30) as response:
            text = response.read().decode()
        assert "mir_reviews_pending 0.0" in text
        with pytest.raises(UsageError, match=rf"cannot serve on 127.0.0.1:{server.port}"):
            bind_metrics(str(server.port), root)
    finally:
        server.close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(UsageError, match="in use"):
            bind_metrics(f"127.0.0.1:{taken.getsockname()[1]}", root)


# Off-contract, label-breaking and secret-carrying actions a model might answer with.
_HOSTILE_ACTION = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ['refund"} 1\nmir_x{a="', "refund\n", "sk-live-0123456789abcdef", "REFUND", "other"]
    ),
    st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=st.lists(_HOSTILE_ACTION, min_size=1, max_size=12))
def test_a_hostile_model_s_actions_never_become_labels(
    tmp_path_factory: pytest.TempPathFactory, actions: list[str]
) -> None:
    """Whatever the model answers as its action, the decisions' action labels are the
    contract's actions (refund, deny, escalate) or none: a proposal that fails the check
    reaches its final record without a decision, so nothing it said becomes a label."""
    from prometheus_client import CollectorRegistry, generate_latest

    from mir.metrics import Counting
    from mir.traces import watch

    root = inbox_project(tmp_path_factory.mktemp("hostile") / "app")
    answers = root / "hostile.jsonl"
    answers.write_text(
        "".join(json.dumps(json.dumps({**GOOD, "action": a})) + "\n" for a in ["refund", *actions])
        * 3
    )
    registry = CollectorRegistry()
    unwatch = watch(Counting(registry))
    try:
        with load_agent(AGENT, project=root, provider="scripted", responses=answers) as agent:
            for _ in range(len(actions) + 1):
                agent.decide(ORDER)
    finally:
        unwatch()
    text = generate_latest(registry).decode()
    labels = set(re.findall(r'mir_decisions_total\{[^}]*action="([^"]*)"', text))
    assert "refund" in labels and labels <= {"refund", "deny", "escalate", "none"}
    assert "sk-live" not in text and "mir_x" not in text
