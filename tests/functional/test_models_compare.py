"""`mir models compare` / `mir models check` through the real CLI on planted traces.

The traces are written through the real store, shaped as the runtime writes them: an
``infer`` event naming the registry version and arm, a ``final`` event with the record;
a shadow flow's snapshot says ``source: shadow`` and ``shadow_of`` its production flow.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from uuid import uuid4

import jsonschema

from mir.project import find_project
from mir.traces import TraceEvent, TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
SCHEMAS = Path(__file__).parents[2] / "schemas"
AGENT = "refunds.triage"
REGISTRY = (
    '[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
    'provider = "litellm"\nartifact = "openai/v1"\n\n'
    '[[models]]\nname = "triage"\nversion = "2"\nstage = "shadow"\n'
    'provider = "litellm"\nartifact = "openai/v2"\n'
)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "models.toml").write_text(REGISTRY)
    return root


def _flow(
    flow_id,
    version,
    arm,
    decision,
    *,
    status="executed",
    latency=10.0,
    tokens=50,
    source=None,
    shadow_of=None,
    reasons=(),
):
    snapshot = {"source": source, "shadow_of": shadow_of} if source else {}
    record = {
        "decision": decision,
        "action": decision["action"] if decision else None,
        "latency_ms": latency,
        "tokens": tokens,
    }
    registry = {"name": "triage", "version": version, "stage": arm, "arm": arm}
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent=AGENT, data=snapshot),
        TraceEvent(
            flow_id=flow_id,
            seq=1,
            step="infer",
            agent=AGENT,
            data={"route": "remote", "attempt": 1, "registry": registry},
        ),
        TraceEvent(
            flow_id=flow_id,
            seq=2,
            step="final",
            agent=AGENT,
            status=status,
            reasons=tuple(reasons),
            provider="litellm",
            data={"record": record},
        ),
    ]


def _decision(action="deny", reason="no"):
    return {"action": action, "confidence": 0.9, "amount": 0, "reason": reason}


def _plant(root: Path) -> None:
    """100 pairs: the shadow's action differs on 10, its reason on 20 (10 of them the
    same flows), it is invalid (a fallback) on none; production latency 10 ms, shadow 30."""
    events = []
    for i in range(100):
        prod = uuid4().hex
        events += _flow(prod, "1", "production", _decision())
        action = "escalate" if i < 10 else "deny"
        reason = "other" if i < 20 else "no"
        events += _flow(
            uuid4().hex,
            "2",
            "shadow",
            _decision(action, reason),
            latency=30.0,
            tokens=70,
            source="shadow",
            shadow_of=prod,
        )
    with TraceStore.for_project(find_project(root)) as store:
        store.append(events)


def test_compare_reports_the_planted_agreement(tmp_path, run_mir):
    root = _project(tmp_path)
    _plant(root)
    done = run_mir("models", "compare", "triage", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    jsonschema.validate(report, json.loads((SCHEMAS / "models-compare.schema.json").read_text()))
    shadow = report["shadow"]
    assert shadow["pairs"] == 100
    assert shadow["action_agreement"] == 0.9
    assert shadow["field_agreement"] == {
        "action": 0.9,
        "amount": 1.0,
        "confidence": 1.0,
        "reason": 0.8,
    }
    assert shadow["production"]["valid_rate"] == 1.0 and shadow["shadow"]["valid_rate"] == 1.0
    assert shadow["production"]["latency_p50_ms"] == 10.0
    assert shadow["shadow"]["latency_p95_ms"] == 30.0
    assert shadow["shadow"]["tokens_per_decision"] == 70.0
    # the shadow's flows are not an arm of production traffic
    assert report["arms"]["production"]["decisions"] == 100
    table = run_mir("models", "compare", "triage", cwd=root)
    assert table.returncode == 0, table.stderr
    assert "action agreement" in table.stdout and "90.0 %" in table.stdout


def test_compare_counts_the_canary_arm(tmp_path, run_mir):
    root = _project(tmp_path)
    events = []
    for i in range(300):
        events += _flow(
            uuid4().hex, "1", "production", _decision(), status="fallback" if i < 6 else "executed"
        )
    for i in range(100):
        events += _flow(
            uuid4().hex,
            "2",
            "canary",
            _decision(),
            status="fallback" if i < 30 else "executed",
            reasons=("rejected_by_reviewer",) if 30 <= i < 35 else (),
        )
    with TraceStore.for_project(find_project(root)) as store:
        store.append(events)
    report = json.loads(run_mir("models", "compare", "triage", "--format", "json", cwd=root).stdout)
    production, canary = report["arms"]["production"], report["arms"]["canary"]
    assert (production["decisions"], production["fallback"]) == (300, 6)
    assert (canary["decisions"], canary["fallback"], canary["override"]) == (100, 30, 5)
    assert canary["version"] == "2"
    assert report["canary"]["roll_back"] is True  # 0.30 vs 0.02, p << 0.01, 100 each


def test_compare_errors_and_no_decisions(tmp_path, run_mir):
    root = _project(tmp_path)
    empty = run_mir("models", "compare", "triage", cwd=root)
    assert empty.returncode == 0 and "no decisions yet" in empty.stdout
    unknown = run_mir("models", "compare", "nope", cwd=root)
    assert unknown.returncode == 2
    assert "no model named 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr
    since = run_mir("models", "compare", "triage", "--since", "24h", cwd=root)
    assert since.returncode == 0, since.stderr


def _plant_bad_canary(root: Path) -> None:
    (root / "models.toml").write_text(REGISTRY.replace('"shadow"', '"canary"\nshare = 0.25'))
    events = []
    for i in range(300):
        events += _flow(
            uuid4().hex, "1", "production", _decision(), status="fallback" if i < 6 else "executed"
        )
    for i in range(100):
        events += _flow(
            uuid4().hex, "2", "canary", _decision(), status="fallback" if i < 30 else "executed"
        )
    with TraceStore.for_project(find_project(root)) as store:
        store.append(events)


def test_models_check_rolls_a_worse_canary_back_and_exits_1(tmp_path, run_mir):
    root = _project(tmp_path)
    _plant_bad_canary(root)
    done = run_mir("models", "check", cwd=root)
    assert done.returncode == 1, done.stderr
    assert "triage: rolled back to shadow" in done.stdout
    assert 'stage = "shadow"' in (root / "models.toml").read_text()
    again = run_mir("models", "check", cwd=root)  # nothing in canary any more
    assert again.returncode == 0 and "no canary to check" in again.stdout


def test_each_drift_watch_tick_checks_the_canaries(tmp_path, run_mir):
    root = _project(tmp_path)
    _plant_bad_canary(root)
    done = run_mir("drift", "watch", "--iterations", "1", cwd=root)
    assert "triage: rolled back to shadow" in done.stdout, done.stdout + done.stderr
    assert 'stage = "shadow"' in (root / "models.toml").read_text()


def test_models_check_without_evidence_keeps_the_canary(tmp_path, run_mir):
    root = _project(tmp_path)
    (root / "models.toml").write_text(REGISTRY.replace('"shadow"', '"canary"\nshare = 0.25'))
    done = run_mir("models", "check", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "kept (not enough decisions yet)" in done.stdout
    assert 'stage = "canary"' in (root / "models.toml").read_text()
