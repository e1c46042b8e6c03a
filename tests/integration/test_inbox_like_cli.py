"""A review from the page leaves exactly what the same review by `mir approve` /
`mir reject` leaves: the same events (steps, statuses, reasons, the review's fields,
a valid signature), the same ledger rows, the same execution. Twin flows, one reviewed
on each side, are compared with the ids, times, signatures and process ids taken out."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support.inbox import csrf_of, executed, inbox_project, log_in, pend, refund

testclient = pytest.importorskip("starlette.testclient")
VOLATILE = {"at", "signature", "statement", "flow_id", "key", "started_at", "created_at"}
CASES = [
    pytest.param("approve", {}, (), id="approve"),
    pytest.param("reject", {}, (), id="reject"),
    pytest.param("correct", {"set.amount": "30"}, ("--set", "amount=30"), id="correct"),
]


def _shape(value: Any) -> Any:
    """``value`` with what differs between two twin flows by nature left out."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items() if k not in VOLATILE and "_ms" not in k}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value


def _story(root: Path, flow: str) -> list[tuple]:
    with TraceStore.for_project(find_project(root)) as store:
        events = store.flow(flow)
    return [(e.step, e.status, list(e.reasons), _shape(e.data)) for e in events]


def _ledger(root: Path, flow: str) -> tuple:
    with sqlite3.connect(root / ".mir" / "executions.db") as db:
        row = db.execute("SELECT state, final, by FROM flows WHERE flow_id = ?", (flow,))
        claims = db.execute("SELECT info, outcome FROM executions").fetchall()
    mine = [(json.loads(i), o) for i, o in claims if json.loads(i).get("flow_id") == flow]
    return row.fetchone(), [(_shape(info), json.loads(o) if o else o) for info, o in mine]


@pytest.mark.parametrize(("verdict", "form", "flags"), CASES)
def test_a_page_review_leaves_what_the_cli_review_leaves(
    tmp_path: Path, verdict: str, form: dict, flags: tuple
) -> None:
    from mir.inbox import create_app

    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    on_page, on_cli = pend(root, refund(amount=60), refund(amount=60))
    with testclient.TestClient(create_app(root, keys), follow_redirects=False) as client:
        log_in(client, "ana")
        token = csrf_of(client.get(f"/flows/{on_page}").text)
        data = {"csrf": token, "reason": "checked by hand", **form}
        assert client.post(f"/flows/{on_page}/{verdict}", data=data).status_code == 303
    command = "reject" if verdict == "reject" else "approve"
    cli = subprocess.run(
        [str(MIR_EXE), command, on_cli, "--by", "ana", "--key", str(keys / "ana.key"),
         "--reason", "checked by hand", *flags],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert _story(root, on_page) == _story(root, on_cli)
    assert _ledger(root, on_page) == _ledger(root, on_cli)
    paid = [e["params"] for e in executed(root)]
    expected = {"approve": [60, 60], "reject": [], "correct": [30, 30]}[verdict]
    assert [p["amount"] for p in paid] == expected
