"""Two reviewers race for the same flows: ana approves in the inbox (a real `mir review
serve` on 127.0.0.1), bo rejects with `mir reject` at the same moment. The ledger's claim
settles each race: exactly one outcome per flow, at most one execution, and the loser is
told who won."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support.inbox import csrf_of, executed, inbox_project, pend, refund, served

httpx = pytest.importorskip("httpx")
pytestmark = pytest.mark.slow

ROUNDS = 8


def _reject(root: Path, flow: str) -> subprocess.CompletedProcess[str]:
    command = [str(MIR_EXE), "reject", flow, "--by", "bo", "--reason", "racing"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120)


def test_inbox_approve_and_cli_reject_race_to_one_outcome(tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    warmup, *flows = pend(root, *[refund(amount=10 + i) for i in range(ROUNDS + 1)])
    started = time.monotonic()
    assert _reject(root, warmup).returncode == 0
    cli_time = time.monotonic() - started  # how long `mir reject` takes on this machine
    outcomes: dict[str, tuple[int, subprocess.CompletedProcess[str]]] = {}
    with served(root) as url, httpx.Client(base_url=url, timeout=120) as client:
        token = csrf_of(client.get("/login").text)
        client.post("/login", data={"csrf": token, "name": "ana", "password": "ana-s3cret-pass"})
        token = csrf_of(client.get("/").text)
        for index, flow in enumerate(flows):
            # the page's click lands from "before the CLI starts up" to "after it is done"
            delay = cli_time * 1.6 * index / (ROUNDS - 1)
            done: dict[str, subprocess.CompletedProcess[str]] = {}
            cli = threading.Thread(target=lambda f=flow: done.update(cli=_reject(root, f)))
            cli.start()
            time.sleep(delay)
            answer = client.post(f"/flows/{flow}/approve", data={"csrf": token})
            cli.join()
            outcomes[flow] = (answer.status_code, done["cli"])
            if answer.status_code == 409:  # it still waited when the page asked: the claim
                assert "already rejected (by bo" in answer.text
            else:  # approved (303), or bo's reject had ended it already (404): no longer waits
                assert answer.status_code in (303, 404), answer.text
            if done["cli"].returncode == 1:
                assert "already approved" in done["cli"].stderr or "already executed" in (
                    done["cli"].stderr
                ), done["cli"].stderr

    ran = executed(root)
    with TraceStore.for_project(find_project(root)) as store:
        for flow, (status, cli) in outcomes.items():
            events = store.flow(flow)
            finals = [e for e in events if e.step == "final"]
            assert len(finals) == 1, (flow, [e.step for e in events])
            reviews = [e.data["by"] for e in events if e.step == "review"]
            amount = next(e for e in events if e.step == "snapshot").data["input"]["amount"]
            paid = [e for e in ran if e["params"]["amount"] == amount]
            inbox_won = status == 303
            # exactly one side won: the other was told so and wrote nothing
            assert inbox_won != (cli.returncode == 0), (flow, status, cli.stderr)
            if inbox_won:
                assert finals[0].status == "executed" and reviews == ["ana"] and len(paid) == 1
                assert cli.returncode == 1
            else:
                assert finals[0].status == "rejected" and reviews == ["bo"] and paid == []
                assert status in (404, 409)
    winners = {"inbox" if s == 303 else "cli" for s, _ in outcomes.values()}
    assert winners == {"inbox", "cli"}, outcomes  # both sides won some races
    assert len(ran) == sum(s == 303 for s, _ in outcomes.values())
