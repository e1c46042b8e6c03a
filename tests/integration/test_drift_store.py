"""`mir drift` over a real trace store: planted shifts trip the right metric and kind,
the SQL statistics equal scipy's on the stored decisions, and a concurrent writer
neither breaks a check nor gets counted twice."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mir.drift import WindowOptions, measure
from mir.project import find_project
from mir.traces import TraceStore
from tests.support import drift_month

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
END = datetime(2026, 11, 1, tzinfo=UTC)
WEEK4 = WindowOptions(window="7d", reference="21d", now=END)
month = drift_month.load()


def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return root


def write(root: Path, after=None, *, per_day: int = 80, shift: bool = True, seed: int = 3) -> int:
    with TraceStore.for_project(find_project(root)) as traces:
        return month.write_month(
            traces,
            end=END,
            days=28,
            per_day=per_day,
            shift_day=21 if shift else None,
            seed=seed,
            after=after or month.STABLE,
        )


def tripped(root: Path) -> dict[str, tuple[str, str]]:
    [agent] = measure(root, options=WEEK4).agents
    return {
        m.metric: (m.verdict, m.kind) for m in agent.metrics if m.verdict in ("warn", "suspend")
    }


def test_stable_data_trips_nothing(tmp_path):
    root = desk(tmp_path)
    write(root, shift=False)
    assert tripped(root) == {}


SHIFTS = {
    "action mix": (
        {"actions": {"refund": 0.8, "reject": 0.1, "escalate": 0.1}},
        "action.js",
        "optimization",
    ),
    "confidence": ({"confidence": (3.0, 2.0)}, "confidence.ks", "semantic"),
    "fallback rate": ({"fallback_rate": 0.2}, "rate.fallback", "environmental"),
    "latency": ({"latency_ms": 3000.0}, "latency.p50", "environmental"),
    "limit hugging": ({"hug_rate": 0.5}, "limits.hugging", "optimization"),
    "model hash": ({"model": "Qwen2.5-0.5B-Instruct.Q4_K_M.gguf"}, "change.model", "semantic"),
    "prompt hash": ({"prompt_hash": "5e7f00d2c4a1"}, "change.prompt", "semantic"),
}


@pytest.mark.parametrize("shift", SHIFTS)
def test_a_planted_shift_trips_the_right_metric_and_kind(tmp_path, shift):
    changes, metric, kind = SHIFTS[shift]
    root = desk(tmp_path)
    write(root, replace(month.STABLE, **changes))
    found = tripped(root)
    assert metric in found, found
    assert found[metric][1] == kind
    if shift in ("model hash", "prompt hash"):
        [agent] = measure(root, options=WEEK4, store=False).agents
        named = "Qwen2.5" if shift == "model hash" else "5e7f00d2c4a1"
        assert any(named in cause for cause in agent.likely_causes), agent.likely_causes


def _stored_windows(root: Path):
    """The confidence of every production decision, per window, read back event by event."""
    scipy_stats = pytest.importorskip("scipy.stats")
    first_at: dict[str, datetime] = {}
    confidence: dict[str, float] = {}
    with TraceStore.for_project(find_project(root)) as traces:
        for event in traces.events():
            first_at.setdefault(event.flow_id, event.at)
            if event.step == "final":
                confidence[event.flow_id] = event.data["record"]["decision"]["confidence"]
    start = END - timedelta(days=7)
    current = [c for f, c in confidence.items() if start <= first_at[f] < END]
    reference = [
        c for f, c in confidence.items() if start - timedelta(days=21) <= first_at[f] < start
    ]
    return scipy_stats, reference, current


def test_sql_statistics_equal_scipy_on_the_stored_decisions(tmp_path):
    root = desk(tmp_path)
    write(root, replace(month.STABLE, confidence=(6.0, 2.0)))
    scipy_stats, reference, current = _stored_windows(root)
    [agent] = measure(root, options=WEEK4, store=False).agents
    metrics = {m.metric: m for m in agent.metrics}
    ks = scipy_stats.ks_2samp(reference, current)
    assert metrics["confidence.ks"].value == pytest.approx(ks.statistic, abs=1e-9)
    expected_w1 = scipy_stats.wasserstein_distance(reference, current)
    assert metrics["confidence.wasserstein"].value == pytest.approx(expected_w1, abs=1e-9)
    n, m = len(reference), len(current)
    assert (metrics["confidence.ks"].reference_n, metrics["confidence.ks"].current_n) == (n, m)
    asymptotic = scipy_stats.kstwobign.sf(ks.statistic * (n * m / (n + m)) ** 0.5)
    assert metrics["confidence.ks"].p_value == pytest.approx(asymptotic, abs=1e-9)


def test_a_run_is_recorded_and_the_history_grows(tmp_path):
    from mir.drift import history

    root = desk(tmp_path)
    write(root, replace(month.STABLE, hug_rate=0.5))
    first = measure(root, options=WEEK4)
    assert first.stored
    measure(root, options=WEEK4)
    points = history("triage", "limits.hugging", root)
    [hugging] = [m for m in first.agents[0].metrics if m.metric == "limits.hugging"]
    assert [(p.metric, p.value, p.verdict) for p in points] == [
        ("limits.hugging", hugging.value, hugging.verdict)
    ] * 2


WRITER = textwrap.dedent(
    """
    import random
    import sys
    from datetime import UTC, datetime, timedelta
    from pathlib import Path
    from mir.traces import TraceStore
    sys.path.insert(0, sys.argv[2])
    from tests.support import drift_month
    month = drift_month.load()
    rng = random.Random(11)
    end = datetime.fromisoformat(sys.argv[3])
    # small segments: they rotate and compact while the checks read
    store = TraceStore(Path(sys.argv[1]) / ".mir" / "traces", segment_events=400, compact_after=2)
    for i in range(int(sys.argv[4])):
        at = end - timedelta(hours=1) + timedelta(seconds=i)
        store.append(month.flow_events(rng, at, month.STABLE))
    store.close()
    """
)


def test_a_concurrent_writer_is_neither_an_error_nor_double_counted(tmp_path):
    root = desk(tmp_path)
    written = write(root, shift=False, per_day=20)
    extra = 1500
    repo = Path(__file__).parents[2]
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writer = subprocess.Popen(
        [sys.executable, str(script), str(root), str(repo), END.isoformat(), str(extra)],
        stderr=subprocess.PIPE,
    )
    wide = WindowOptions(window="2d", reference="60d", now=END + timedelta(hours=1))
    counts = []
    while writer.poll() is None:
        report = measure(root, options=wide)
        [agent] = report.agents
        counts.append(agent.current.decisions + agent.reference.decisions)
    assert writer.wait() == 0, writer.stderr.read().decode()
    [agent] = measure(root, options=wide).agents
    total = agent.current.decisions + agent.reference.decisions
    assert total == written + extra
    assert counts and counts == sorted(counts) and max(counts) <= total


def test_eval_flows_are_left_out(tmp_path):
    """Flows whose final event (and snapshot) say source "eval" or "shadow" (what `mir
    eval` and a shadow version write) never count; nor do those of a store written
    before finals carried the source, whose snapshot alone says so."""
    import random

    root = desk(tmp_path)
    written = write(root, shift=False)
    rng = random.Random(1)
    evals = []
    skewed = replace(month.STABLE, actions={"escalate": 1.0}, confidence=(1.0, 5.0))
    for i in range(400):  # all in the current window, all escalations: drift if counted
        events = month.flow_events(rng, END - timedelta(hours=1, seconds=i), skewed)
        source = "shadow" if i % 4 == 0 else "eval"
        snapshot, final = events[0], events[-1]
        events[0] = snapshot.model_copy(update={"data": {**snapshot.data, "source": source}})
        record = {"record": final.data["record"]}  # a legacy final: the snapshot says it
        data = record if i % 2 else {**final.data, "source": source}
        events[-1] = final.model_copy(update={"data": data})
        evals += events
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(evals)
    assert tripped(root) == {}
    wide = WindowOptions(window="2d", reference="60d", now=END)
    [everything] = measure(root, options=wide, store=False).agents
    assert everything.current.decisions + everything.reference.decisions == written


def test_an_agent_without_decisions_in_the_windows_has_no_metrics(tmp_path):
    root = desk(tmp_path)
    write(root, shift=False, per_day=5)
    long_ago = WindowOptions(window="1d", reference="7d", now=END - timedelta(days=300))
    [agent] = measure(root, ["triage"], long_ago, store=False).agents
    assert (agent.current.decisions, agent.reference.decisions, agent.metrics) == (0, 0, [])


def test_no_reference_decisions_names_no_cause(tmp_path):
    root = desk(tmp_path)
    write(root, per_day=10)
    first_days = WindowOptions(window="7d", reference="30d", now=END - timedelta(days=21))
    [agent] = measure(root, options=first_days, store=False).agents
    assert agent.reference.decisions == 0 and agent.current.decisions > 0
    assert agent.likely_causes == []
    assert {m.verdict for m in agent.metrics} == {"not_enough_data"}
