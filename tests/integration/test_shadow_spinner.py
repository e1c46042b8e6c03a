"""``mir run agent`` with the terminal spinner and a registry shadow version: the agent
is built once, so it has exactly one shadow worker, and that worker (the one ``close()``
waits for) decides the shadow of the production flow; the spinner hears production's
model calls only.

Only the model layer is scripted (``_Providers`` answers by the registry version's
artifact); registry, resolver, pipeline, trace store and ledger are the real ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mir.contracts import Route
from mir.project import find_project
from mir.runtime import load_agent, run_agent
from mir.runtime.providers import _Providers
from mir.runtime.shadow import ShadowWorker
from mir.traces import TraceStore
from tests.integration.test_models_shadow import ByOrder, _setup

INPUT = '{"order_id": "A1", "amount": 40, "message": "x"}'


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[ShadowWorker]:
    """Every shadow worker constructed during the test."""
    workers: list[ShadowWorker] = []
    construct = ShadowWorker.__init__

    def recording(self: ShadowWorker, *args: Any, **kwargs: Any) -> None:
        construct(self, *args, **kwargs)
        workers.append(self)

    monkeypatch.setattr(ShadowWorker, "__init__", recording)
    return workers


@pytest.fixture
def shadowed(tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root, _, _ = _setup(tmp_path, tiny_gguf)
    models = {"v1.gguf": ByOrder(), "v2.gguf": ByOrder(differs=True)}

    def by_artifact(self: _Providers, route: Route) -> ByOrder:
        return models[Path(route.model or "").name]

    monkeypatch.setattr(_Providers, "__call__", by_artifact)
    return root


def _sources(root: Path) -> dict[str, tuple[Any, Any, str | None]]:
    """flow id -> (source, shadow_of, final status)."""
    flows: dict[str, list[Any]] = {}
    with TraceStore.for_project(find_project(root)) as store:
        for event in store.events():
            entry = flows.setdefault(event.flow_id, [None, None, None])
            if event.step == "snapshot":
                entry[0], entry[1] = event.data.get("source"), event.data.get("shadow_of")
            if event.step == "final":
                entry[2] = event.status
    return {flow: (s, of, final) for flow, (s, of, final) in flows.items()}


def test_a_run_with_a_spinner_has_one_shadow_worker_and_it_decides(
    shadowed: Path, built: list[ShadowWorker]
):
    steps: list[str] = []
    record = run_agent("refunds.triage", input=INPUT, project=shadowed, progress=steps.append)
    assert record.status == "executed", record
    assert len(built) == 1, f"{len(built)} shadow workers for one agent"
    (worker,) = built
    assert (worker.stats.submitted, worker.stats.decided, worker.stats.dropped) == (1, 1, 0)
    flows = _sources(shadowed)
    shadows = [f for f in flows.values() if f[0] == "shadow"]
    assert len(shadows) == 1 and shadows[0][1] == record.flow_id, flows
    assert shadows[0][2] is not None, f"orphan shadow flow: {flows}"
    # production's model call (version 1) is narrated, the shadow's (version 2) is not
    assert steps == ["inferring with scripted/v1.gguf (attempt 1/3)", "executing deny"], steps


def test_load_agent_takes_the_spinner(shadowed: Path, built: list[ShadowWorker]):
    steps: list[str] = []
    with load_agent("refunds.triage", project=shadowed, progress=steps.append) as agent:
        record = agent.decide({"order_id": "A1", "amount": 40, "message": "x"})
        assert agent.shadow is not None and agent.shadow.wait(30)
    assert record.status == "executed", record
    assert built == [agent.shadow]
    assert steps == ["inferring with scripted/v1.gguf (attempt 1/3)", "executing deny"], steps
