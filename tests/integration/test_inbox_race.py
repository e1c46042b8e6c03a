"""Two reviewers race for the same flows: ana approves in the inbox (a real `mir review
serve` on 127.0.0.1), bo rejects with `mir reject` at the same moment. The ledger's claim
settles each race: exactly one outcome per flow, at most one execution, and the loser is
told who won (or, when the winner had already finished, that the flow no longer waits)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.conftest import MIR_EXE
from tests.support.inbox import PASSWORDS, csrf_of, executed, inbox_project, pend, refund, served

httpx = pytest.importorskip("httpx")
pytestmark = pytest.mark.slow

ROUNDS = 10


def _reject(root: Path, flow: str) -> subprocess.CompletedProcess[str]:
    command = [str(MIR_EXE), "reject", flow, "--by", "bo", "--reason", "racing"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120)


def cli_time(root: Path) -> float:
    """How long a `mir` command takes to start and answer on this machine."""
    started = time.monotonic()
    subprocess.run([str(MIR_EXE), "review", "list"], cwd=root, capture_output=True, timeout=120)
    return time.monotonic() - started


def _logged_in(client) -> str:
    token = csrf_of(client.get("/login").text)
    form = {"csrf": token, "name": "ana", "password": PASSWORDS["ana"]}
    assert client.post("/login", data=form).status_code == 303
    return csrf_of(client.get("/").text)


def _story(root: Path, flow: str) -> tuple[list, list[str], float]:
    with TraceStore.for_project(find_project(root)) as store:
        events = store.flow(flow)
    finals = [e for e in events if e.step == "final"]
    reviews = [str(e.data["by"]) for e in events if e.step == "review"]
    amount = next(e for e in events if e.step == "snapshot").data["input"]["amount"]
    return finals, reviews, amount


def test_inbox_approve_and_cli_reject_race_to_one_outcome(tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    warmup, *flows = pend(root, *[refund(amount=10 + i) for i in range(ROUNDS + 1)])
    started = time.monotonic()
    assert _reject(root, warmup).returncode == 0
    cli_time = time.monotonic() - started  # how long `mir reject` takes on this machine
    outcomes: dict[str, tuple[int, subprocess.CompletedProcess[str]]] = {}
    with served(root) as url, httpx.Client(base_url=url, timeout=120) as client:
        token = _logged_in(client)
        for index, flow in enumerate(flows):
            # the click lands from well before the CLI claims the flow to after it is done
            delay = cli_time * (0.3 + 1.2 * index / (ROUNDS - 1))
            done: dict[str, subprocess.CompletedProcess[str]] = {}
            cli = threading.Thread(target=lambda f=flow, d=done: d.update(cli=_reject(root, f)))
            # the sweep's two ends are sure whatever this machine's timing: the first click
            # lands before the CLI starts, the last after it is done; between them it races
            if index == 0:
                answer = client.post(f"/flows/{flow}/approve", data={"csrf": token})
            cli.start()
            if index == ROUNDS - 1:
                cli.join()
            elif index > 0:
                time.sleep(delay)
            if index > 0:
                answer = client.post(f"/flows/{flow}/approve", data={"csrf": token})
            cli.join()
            outcomes[flow] = (answer.status_code, done["cli"])

    ran = executed(root)
    for flow, (status, cli) in outcomes.items():
        finals, reviews, amount = _story(root, flow)
        assert len(finals) == 1, flow  # exactly one outcome
        paid = [e for e in ran if e["params"]["amount"] == amount]
        if status == 303:  # the inbox won: executed once, bo was told ana holds it
            assert finals[0].status == "executed" and reviews == ["ana"] and len(paid) == 1
            assert cli.returncode == 1 and "(by ana" in cli.stderr, cli.stderr
        else:  # the CLI won: nothing ran; the page said who won, or that it no longer waits
            assert cli.returncode == 0, cli.stderr
            assert finals[0].status == "rejected" and reviews == ["bo"] and paid == []
            assert status in (404, 409), status
    statuses = [status for status, _ in outcomes.values()]
    assert 303 in statuses and set(statuses) & {404, 409}, statuses  # both sides won races
    assert len(ran) == statuses.count(303)


def test_a_cli_reject_while_the_inbox_approval_executes_changes_nothing(tmp_path: Path) -> None:
    """The overlap made certain: the inbox's approval holds the flow while its executor
    runs (held until released); bo's `mir reject`, started meanwhile, waits for it and
    then loses to it."""
    root = inbox_project(tmp_path / "app")
    adapters = root / "capabilities" / "refunds" / "adapters.py"
    held = "while True:\n            time.sleep(0.05)"
    text = adapters.read_text()
    assert held in text
    release = "while not Path(f'{hold}.release').exists():\n            time.sleep(0.05)"
    adapters.write_text(text.replace(held, release))
    [flow] = pend(root, refund(amount=40))
    hold = tmp_path / "hold"
    env = {"REFUNDS_HOLD": str(hold)}
    patience = max(3.0, 2 * cli_time(root))
    with served(root, env=env) as url, httpx.Client(base_url=url, timeout=120) as client:
        token = _logged_in(client)
        answers: list = []
        click = threading.Thread(
            target=lambda: answers.append(
                client.post(f"/flows/{flow}/approve", data={"csrf": token})
            )
        )
        click.start()
        deadline = time.monotonic() + 60
        while not Path(f"{hold}.started").exists():
            assert time.monotonic() < deadline, "the executor never started"
            time.sleep(0.05)
        done: dict[str, subprocess.CompletedProcess[str]] = {}
        rejecting = threading.Thread(target=lambda: done.update(cli=_reject(root, flow)))
        rejecting.start()
        rejecting.join(timeout=patience)
        # bo's reject cannot end while ana's approval holds the flow: it waits for it
        assert rejecting.is_alive(), done["cli"].stderr
        Path(f"{hold}.release").write_text("go")
        click.join(timeout=60)
        rejecting.join(timeout=120)
    cli = done["cli"]
    assert cli.returncode == 1 and "(by ana" in cli.stderr, cli.stderr
    assert answers and answers[0].status_code == 303
    finals, reviews, _ = _story(root, flow)
    assert [f.status for f in finals] == ["executed"] and reviews == ["ana"]
    assert len(executed(root)) == 1


def test_reviews_of_many_flows_at_once_in_one_server_all_land(tmp_path: Path) -> None:
    """Two reviewers' sessions approving and rejecting different flows at the same time
    in one server process: every review lands once, signed, and the store verifies."""
    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    flows = pend(root, *[refund(amount=20 + i) for i in range(8)])
    answers: dict[str, int] = {}
    with served(root, keys=keys) as url:

        def review(name: str, mine: list[str]) -> None:
            with httpx.Client(base_url=url, timeout=120) as client:
                page = client.get("/login").text
                form = {"csrf": csrf_of(page), "name": name, "password": PASSWORDS[name]}
                assert client.post("/login", data=form).status_code == 303
                token = csrf_of(client.get("/").text)
                for index, flow in enumerate(mine):
                    verdict = "approve" if index % 2 == 0 else "reject"
                    data = {"csrf": token, "reason": f"{name} says so"}
                    answers[flow] = client.post(f"/flows/{flow}/{verdict}", data=data).status_code

        reviewers = [
            threading.Thread(target=review, args=("ana", flows[0::2])),
            threading.Thread(target=review, args=("bo", flows[1::2])),
        ]
        for thread in reviewers:
            thread.start()
        for thread in reviewers:
            thread.join(timeout=300)
    assert answers == {flow: 303 for flow in flows}
    for index, flow in enumerate(flows):
        finals, reviews, _ = _story(root, flow)
        by = "ana" if index % 2 == 0 else "bo"
        verdict_executes = (index // 2) % 2 == 0
        assert reviews == [by]
        assert [f.status for f in finals] == ["executed" if verdict_executes else "rejected"]
    assert len(executed(root)) == 4
    verified = subprocess.run(
        [str(MIR_EXE), "traces", "verify"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
