"""Every flow has a source (production, eval, shadow, replay) and only production counts
as evidence, through the real executable.

A replayed run (``--provider scripted --responses``, the Python API's ``responses=``) is
traced ``source: replay`` in its snapshot and final event; ``mir drift`` and ``mir models
compare`` / ``check`` over a store holding production, eval (``mir eval``, promotion-gate
runs), shadow and replay flows give the figures of the production flows alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import uuid4

import pytest

from mir.project import find_project
from mir.traces import TraceEvent, TraceStore
from tests.functional.reviewer_keys import sign_as
from tests.functional.test_drift_cli import month
from tests.functional.test_models_compare import REGISTRY, _decision, _project
from tests.functional.test_models_compare import _flow as _planted
from tests.support.drift_flows import decision_flow
from tests.support.drift_flows import desk as make_desk

AGENT = "refunds.triage"
REPLAY = ("--provider", "scripted", "--responses", "responses/damaged_mug.jsonl")
MUG = ("-i", "@inputs/damaged_mug.json")


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    return make_desk(tmp_path)


def _events(root: Path, flow_id: str) -> dict[str, dict]:
    with TraceStore.for_project(find_project(root)) as store:
        return {e.step: e.data for e in store.flow(flow_id)}


def test_a_replayed_run_is_traced_and_listed_as_a_replay(run_mir, desk: Path):
    done = run_mir("run", "agent", AGENT, *MUG, *REPLAY, "--json", cwd=desk)
    assert done.returncode == 0, done.stderr
    flow_id = json.loads(done.stdout)["flow_id"]
    events = _events(desk, flow_id)
    assert events["snapshot"]["source"] == "replay" and events["final"]["source"] == "replay"
    listed = run_mir("traces", "list", cwd=desk)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[:2]
    assert "source" in header.split() and " replay " in row, listed.stdout
    as_json = json.loads(run_mir("traces", "list", "--json", cwd=desk).stdout)
    assert [(f["flow_id"], f["source"]) for f in as_json] == [(flow_id, "replay")]
    only = run_mir("traces", "list", "--source", "production", cwd=desk)
    assert only.returncode == 0 and only.stdout.strip() == "no flows", only.stdout
    assert flow_id[:12] in run_mir("traces", "list", "--source", "replay", cwd=desk).stdout


def test_a_live_decision_is_traced_as_production(run_mir, app: Path):
    # the runtime fixture's agent asks the rules only (no model): a real production flow
    done = run_mir(
        "run", "agent", AGENT, "-i", '{"order_id": "A1", "amount": 40}', "--provider", "rules",
        "--json", cwd=app,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    events = _events(app, json.loads(done.stdout)["flow_id"])
    assert events["snapshot"]["source"] == "production"
    assert events["final"]["source"] == "production"


def test_an_approved_replay_stays_a_replay(run_mir, desk: Path, tmp_path, monkeypatch):
    sign_as(desk, tmp_path / "keys", monkeypatch)  # refunds need a support lead's signature
    ticket = ("-i", "@inputs/blender_broken.json")
    answers = ("--provider", "scripted", "--responses", "responses/blender_broken.jsonl")
    done = run_mir("run", "agent", AGENT, *ticket, *answers, "--json", cwd=desk)
    record = json.loads(done.stdout)
    assert record["status"] == "pending_review", record
    approved = run_mir("approve", record["flow_id"], "--by", "ana", cwd=desk)
    assert approved.returncode in (0, 1), approved.stderr
    assert _events(desk, record["flow_id"])["final"]["source"] == "replay"


def test_traces_list_says_unfinished_never_none_and_suggests_a_source(run_mir, app: Path):
    with TraceStore.for_project(find_project(app)) as store:
        store.append(
            [TraceEvent(flow_id=uuid4().hex, seq=0, step="snapshot", agent=AGENT, data={})]
        )
    listed = run_mir("traces", "list", cwd=app)
    assert listed.returncode == 0, listed.stderr
    assert "unfinished" in listed.stdout and "None" not in listed.stdout, listed.stdout
    bad = run_mir("traces", "list", "--source", "evals", cwd=app)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "unknown source 'evals'" in bad.stderr and "did you mean 'eval'" in bad.stderr


def test_traces_list_json_says_unfinished_and_the_status_filter_finds_them(run_mir, app: Path):
    # --json gave status null for a flow with no final event, and --status could not ask
    # for such flows
    flow = uuid4().hex
    with TraceStore.for_project(find_project(app)) as store:
        store.append([TraceEvent(flow_id=flow, seq=0, step="snapshot", agent=AGENT, data={})])
    done = run_mir("run", "agent", AGENT, "-i", '{"order_id": "A1", "amount": 40}',
                   "--provider", "rules", "--json", cwd=app)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    for args in (("--json",), ("--format", "json")):
        listed = run_mir("traces", "list", *args, cwd=app)
        assert listed.returncode == 0, listed.stderr
        statuses = {f["flow_id"]: f["status"] for f in json.loads(listed.stdout)}
        assert statuses[flow] == "unfinished" and None not in statuses.values(), statuses
    only = run_mir("traces", "list", "--status", "unfinished", "--json", cwd=app)
    assert [f["flow_id"] for f in json.loads(only.stdout)] == [flow], only.stdout


# -- drift ------------------------------------------------------------------------------

_REPLAYS = """
import sys
from mir.runtime import load_agent
with load_agent("refunds.triage", project=sys.argv[1], responses=sys.argv[2]) as agent:
    for _ in range(int(sys.argv[3])):
        agent.decide({"ticket_id": "T-9", "customer_id": "C-009", "order_id": "A-1009",
                      "category": "other", "requested_amount": 5.0, "message": "replayed"})
"""


def _drift(run_mir, root: Path) -> list[dict]:
    done = run_mir("drift", "--last", "300", "--reference-last", "900", "--format", "json",
                   cwd=root)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    agents = json.loads(done.stdout)["agents"]
    for agent in agents:  # when the windows were cut: not a figure
        for side in ("reference", "current"):
            agent[side] = {k: v for k, v in agent[side].items() if k not in ("start", "end")}
    return agents


def _rounded(value: object) -> object:
    """Figures to 9 places (DuckDB's float sums depend on its scan order)."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_drift_counts_only_production_flows(run_mir, desk: Path):
    month(desk)
    before = _drift(run_mir, desk)
    # 60 replays through the Python API's responses= (the newest flows: a counted window
    # would take them first), every answer a refund of 999 by the "model" answers.jsonl
    answer = json.dumps(
        json.dumps({"category": "other", "action": "refund", "order_id": "A-1009",
                    "amount": 999.0, "confidence": 0.99, "reason": "replayed"})
    )  # fmt: skip
    (desk / "answers.jsonl").write_text((answer + "\n") * 200)
    done = subprocess.run(
        [sys.executable, "-c", _REPLAYS, str(desk), str(desk / "answers.jsonl"), "60"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # an eval run, and planted shadow flows deciding the same way
    evaluated = run_mir("eval", AGENT, "--responses", "responses/eval-triage.jsonl", "-q",
                        cwd=desk)  # fmt: skip
    assert evaluated.returncode in (0, 1), evaluated.stderr
    now = datetime.now(UTC)
    shadows = []
    for i in range(60):
        decision = {"action": "refund", "amount": 999.0, "confidence": 0.99}
        shadows += decision_flow(
            uuid4().hex, AGENT, now + timedelta(seconds=i), {"decision": decision},
            source="shadow", status="executed", model="shadow.gguf",
        )  # fmt: skip
    with TraceStore.for_project(find_project(desk)) as store:
        store.append(shadows)
    after = _drift(run_mir, desk)
    assert _rounded(after) == _rounded(before)
    assert not any("answers.jsonl" in cause for a in after for cause in a["likely_causes"])


# -- releases ---------------------------------------------------------------------------


def _plant_evidence(root: Path, *, noise: bool) -> None:
    """300 production flows on version 1 (2 % fallback), 100 on the canary (also 2 %);
    with ``noise``: what must not count beside them (eval runs and promotion-gate runs on
    both arms, all fallbacks at 0.7 ms; replays; a shadow of a replay)."""
    events = []
    for i in range(300):
        status = "fallback" if i < 6 else "executed"
        events += _planted(uuid4().hex, "1", "production", _decision(), status=status,
                           source="production")  # fmt: skip
    for i in range(100):
        status = "fallback" if i < 2 else "executed"
        events += _planted(uuid4().hex, "2", "canary", _decision(), status=status,
                           source="production")  # fmt: skip
    if noise:
        for arm, version in (("production", "1"), ("canary", "2")):
            for source in ("eval", "eval", "replay"):
                for _ in range(60):
                    events += _planted(uuid4().hex, version, arm, None, status="fallback",
                                       latency=0.7, source=source)  # fmt: skip
        replay = uuid4().hex
        events += _planted(replay, "1", "production", _decision(), source="replay")
        events += _planted(uuid4().hex, "3", "shadow", _decision("escalate"),
                           source="shadow", shadow_of=replay)  # fmt: skip
    with TraceStore.for_project(find_project(root)) as store:
        store.append(events)


def _with_canary(root: Path) -> None:
    (root / "models.toml").write_text(
        REGISTRY.replace('"shadow"', '"canary"\nshare = 0.25')
        + '\n[[models]]\nname = "triage"\nversion = "3"\nstage = "shadow"\n'
        'provider = "litellm"\nartifact = "openai/v3"\n'
    )


def test_models_compare_and_check_count_only_production(run_mir, tmp_path: Path):
    clean, mixed = _project(tmp_path / "clean"), _project(tmp_path / "mixed")
    for root, noise in ((clean, False), (mixed, True)):
        _with_canary(root)
        _plant_evidence(root, noise=noise)
    reports = []
    for root in (clean, mixed):
        done = run_mir("models", "compare", "triage", "--format", "json", cwd=root)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout))
    assert reports[1] == reports[0]
    assert reports[0]["arms"]["production"]["decisions"] == 300
    assert reports[0]["arms"]["canary"]["decisions"] == 100
    assert reports[0]["shadow"]["pairs"] == 0  # the only shadow flow shadows a replay
    checked = run_mir("models", "check", cwd=mixed)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "rolled back" not in checked.stdout
    assert 'stage = "canary"' in (mixed / "models.toml").read_text()


# -- export -----------------------------------------------------------------------------


def test_traces_export_filters_whole_flows_by_agent_since_and_source(run_mir, desk: Path):
    replayed = run_mir("run", "agent", AGENT, *MUG, *REPLAY, "--json", cwd=desk)
    replay_id = json.loads(replayed.stdout)["flow_id"]
    old = datetime.now(UTC) - timedelta(days=3)
    planted = [
        *decision_flow(uuid4().hex, AGENT, old, {"decision": {}}, status="executed"),
        *decision_flow(uuid4().hex, "other.agent", old, {"decision": {}}, source="eval"),
    ]
    with TraceStore.for_project(find_project(desk)) as store:
        store.append(planted)

    def flows(*args: str) -> set[str]:
        done = run_mir("traces", "export", *args, cwd=desk)
        assert done.returncode == 0, done.stderr
        return {json.loads(line)["flow_id"] for line in done.stdout.splitlines()}

    everything = flows()
    assert len(everything) == 3
    assert flows("--source", "replay") == {replay_id}
    assert flows("--since", "1d") == {replay_id}
    assert flows("--agent", "triage", "--source", "production") == {planted[0].flow_id}
    assert flows("--agent", "other.agent") == {planted[2].flow_id}
    # each flow whole: every event of the replay, not only those past --since
    lines = run_mir("traces", "export", "--source", "replay", cwd=desk).stdout.splitlines()
    assert len(lines) == len(_events_list(desk, replay_id))
    for fmt in ("otlp", "parquet"):
        out = desk / f"out.{fmt}"
        done = run_mir("traces", "export", "-f", fmt, "-o", str(out), "--source", "replay",
                       cwd=desk)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"exported {len(lines)} event(s)" in done.stdout
    for args, message in (
        (("--source", "shadw"), "did you mean 'shadow'"),
        (("--since", "yesterday"), "--since"),
        (("--agent", "nobody"), "nobody"),
    ):
        bad = run_mir("traces", "export", *args, cwd=desk)
        assert bad.returncode == 2, (args, bad.stdout, bad.stderr)
        assert message in bad.stderr and "Traceback" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) <= 2, bad.stderr


def _events_list(root: Path, flow_id: str) -> list[TraceEvent]:
    with TraceStore.for_project(find_project(root)) as store:
        return store.flow(flow_id)


def test_a_promotion_gate_run_is_no_release_evidence(run_mir, tmp_path: Path, tiny_gguf: Path):
    from tests.functional.test_models_cli import _setup
    from tests.functional.test_models_cli import desk as models_desk

    root = models_desk.__wrapped__(tmp_path, tiny_gguf)
    _setup(run_mir, root)
    gated = run_mir("models", "promote", "qwen", "2", "--to", "production", cwd=root,
                    timeout=600)  # fmt: skip
    assert gated.returncode in (0, 1), gated.stdout + gated.stderr
    assert "gate" in gated.stdout
    evals = json.loads(run_mir("traces", "list", "--source", "eval", "--json", cwd=root).stdout)
    assert evals, "the gate traced its runs"
    done = run_mir("models", "compare", "qwen", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["arms"] == {} and report["notes"] == ["no decisions yet"], report
