"""An approval racing an expiry: real processes (`mir approve F` against a queue read
that finds F past its TTL), exactly one outcome per flow, one execution at most."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from mir.project import find_project
from mir.reviews import pending_page
from mir.traces import TraceStore

from .test_review_queue import LOW, app, decide, executed  # noqa: F401 - the fixture

MIR = Path(sys.executable).parent / "mir"
TRIALS = 8
EXPIRE = (
    "import sys, time; from datetime import datetime; from mir.reviews import pending_page; "
    "time.sleep(float(sys.argv[3])); "
    "page = pending_page(sys.argv[1], now=datetime.fromisoformat(sys.argv[2])); "
    "print(','.join(page.expired))"
)


def test_an_approval_racing_an_expiry_has_exactly_one_outcome(app: Path):  # noqa: F811
    outcomes = []
    # the expiry starts later and later: the approval's process wins some of the races
    for trial in range(TRIALS):
        [flow_id] = decide(app, LOW)  # the only flow waiting: the expiry sees only it
        [item] = pending_page(app).items
        later = (item.created_at + timedelta(seconds=301)).isoformat()
        approving = subprocess.Popen(
            [str(MIR), "approve", flow_id, "--by", "ana"],
            cwd=app, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        expiring = subprocess.run(
            [sys.executable, "-c", EXPIRE, str(app), later, str(trial * 0.15)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        out, err = approving.communicate(timeout=120)
        expired = flow_id in expiring.stdout.strip().split(",")
        with TraceStore.for_project(find_project(app)) as store:
            events = store.flow(flow_id)
        finals = [e for e in events if e.step == "final"]
        assert len(finals) == 1, (flow_id, [e.step for e in events])
        assert len({e.seq for e in events}) == len(events)  # no two writers of one seq
        if expired:
            assert finals[0].status == "expired"
            assert approving.returncode == 1 and "already expired" in err, (out, err)
        else:
            assert approving.returncode == 0, err
            assert finals[0].status == "executed"
        outcomes.append(finals[0].status)
    keys = [line["key"] for line in executed(app)]
    assert len(keys) == len(set(keys)) == outcomes.count("executed")
    assert pending_page(app).total == 0
