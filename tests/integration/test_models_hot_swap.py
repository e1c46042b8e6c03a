"""Hot swap on real llama.cpp: 4 threads decide continuously while models.toml promotes
version 2 (a second copy of the tiny GGUF); a malformed edit keeps the old registry."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from mir.models import RegistryWatcher
from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.integration.test_models_runtime import _project

THREADS = 4


def _registry(v1: Path, v2: Path, *, promoted: bool) -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "1"\n'
        f'stage = "{"retired" if promoted else "production"}"\nartifact = "{v1}"\n\n'
        f'[[models]]\nname = "triage"\nversion = "2"\n'
        f'stage = "{"production" if promoted else "candidate"}"\nartifact = "{v2}"\n'
    )


def _versions(tmp_path: Path, tiny_gguf: Path) -> tuple[Path, Path]:
    v1, v2 = tmp_path / "v1.gguf", tmp_path / "v2.gguf"
    shutil.copy(tiny_gguf, v1)
    shutil.copy(tiny_gguf, v2)
    return v1, v2


def _decide_until(agent, stop: threading.Event, done: list, failures: list) -> None:
    i = 0
    while not stop.is_set():
        i += 1
        started = time.monotonic()
        try:
            record = agent.decide({"order_id": f"T{i}", "amount": 40, "message": "x"})
        except Exception as exc:  # a failed decision is what this test counts
            failures.append(exc)
            continue
        done.append((started, record.flow_id))


def _wait_for(check, seconds: float = 10.0) -> float:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    return time.monotonic()


def test_promotion_swaps_versions_under_load_without_failing_or_repeating_a_decision(
    tmp_path: Path, tiny_gguf: Path
) -> None:
    v1, v2 = _versions(tmp_path, tiny_gguf)
    root = _project(tmp_path, "triage", _registry(v1, v2, promoted=False))
    store = TraceStore(tmp_path / "traces")
    stop, done, failures = threading.Event(), [], []
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        assert RegistryWatcher.for_root(root).running
        threads = [
            threading.Thread(target=_decide_until, args=(agent, stop, done, failures))
            for _ in range(THREADS)
        ]
        for thread in threads:
            thread.start()
        _wait_for(lambda: len(done) >= 8)
        (root / "models.toml").write_text(_registry(v1, v2, promoted=True))
        resolver = agent.deps.models
        swapped = _wait_for(lambda: resolver.registry.get("triage", "2").stage == "production")
        _wait_for(lambda: sum(1 for s, _ in done if s > swapped) >= 8)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not RegistryWatcher.for_root(root).running  # the last agent closed it

    assert failures == []
    flow_ids = [flow_id for _, flow_id in done]
    assert len(flow_ids) == len(set(flow_ids))
    versions_before, versions_after = set(), set()
    for started, flow_id in done:
        events = store.flow(flow_id)
        assert sum(1 for e in events if e.step == events[-1].step) == 1, flow_id
        infer = [e for e in events if e.step == "infer" and "registry" in (e.data or {})]
        assert infer, flow_id
        versions = {e.data["registry"]["version"] for e in infer}
        assert len(versions) == 1, flow_id  # one flow never straddles the swap
        (versions_after if started > swapped else versions_before).update(versions)
    store.close()
    assert versions_after == {"2"}
    assert "1" in versions_before


def test_a_malformed_edit_keeps_the_old_registry_and_decisions_go_on(
    tmp_path: Path, tiny_gguf: Path, capfd
) -> None:
    v1, v2 = _versions(tmp_path, tiny_gguf)
    root = _project(tmp_path, "triage", _registry(v1, v2, promoted=False))
    store = TraceStore(tmp_path / "traces")
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        before = agent.deps.models.registry
        (root / "models.toml").write_text('[[models]]\nname = "triage"\nstage = \n')
        _wait_for(lambda: "cannot be read" in capfd.readouterr().err)
        assert agent.deps.models.registry is before
        record = agent.decide({"order_id": "M1", "amount": 40, "message": "x"})
        infer = [e for e in store.flow(record.flow_id) if e.step == "infer"]
        assert infer[0].data["registry"]["version"] == "1"
    store.close()


def test_watch_models_false_does_not_watch(tmp_path: Path, tiny_gguf: Path) -> None:
    v1, v2 = _versions(tmp_path, tiny_gguf)
    root = _project(tmp_path, "triage", _registry(v1, v2, promoted=False))
    store = TraceStore(tmp_path / "traces")
    with load_agent("refunds.triage", project=root, traces=store, watch_models=False):
        assert not RegistryWatcher.for_root(root).running
    store.close()
