"""What the inbox tests share: a project with flows waiting for review, made by the real
runtime on scripted model answers, and a logged-in TestClient."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mir.project import load_project_at
from mir.reviewers import Reviewer, add_reviewer, generate_key, set_password, write_private_key
from mir.runtime import load_agent
from tests.conftest import MIR_EXE
from tests.support.fixtures import free_port

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
AGENT = "refunds.triage"
PASSWORDS = {"ana": "ana-s3cret-pass", "bo": "bo-s3cret-pass"}


def inbox_project(root: Path, keys: Path | None = None) -> Path:
    """The runtime fixture project (order A1 of 80 EUR in its world) with two declared
    reviewers, ana and bo (role ``support``), who have web logins; their private keys
    go to ``keys`` (``<name>.key``) when given."""
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    state = load_project_at(root).state_dir
    for name, password in PASSWORDS.items():
        key = generate_key()
        add_reviewer(root, Reviewer(name=name, roles=("support",), public_key=key.public_key))
        set_password(root, state, name, password)
        if keys is not None:
            write_private_key(key, keys / f"{name}.key", state)
    return root


def require(root: Path, rule: str) -> None:
    """Give the fixture's refund action an ``approvals`` rule (YAML flow mapping)."""
    contract = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text()
    marker = "    limits:\n      amount: {minimum: 0, maximum: 500}\n"
    assert marker in text
    contract.write_text(text.replace(marker, marker + f"    approvals: {rule}\n", 1))


def pend(
    root: Path, *decisions: dict[str, Any], order: str = "A1", requester: str = "req"
) -> list[str]:
    """One flow per decision (scripted answers, confidence below the threshold): the ids
    of the flows now pending review, in order."""
    answers = root / "inbox-answers.jsonl"
    # twice each: a low confidence cascades from the first route to the second
    answers.write_text("".join(json.dumps(json.dumps(d)) + "\n" for d in decisions for _ in "12"))
    ids = []
    with load_agent(AGENT, project=root, provider="scripted", responses=answers) as agent:
        for decision in decisions:
            amount = decision.get("amount", 0)
            record = agent.decide(
                {"order_id": order, "amount": amount, "message": "hi"}, requested_by=requester
            )
            assert record.status == "pending_review", record
            assert record.decision == decision, record
            ids.append(record.flow_id)
    return ids


def refund(amount: float = 40, reason: str = "arrived broken", **extra: Any) -> dict[str, Any]:
    return {"action": "refund", "confidence": 0.3, "amount": amount, "reason": reason, **extra}


def executed(root: Path) -> list[dict[str, Any]]:
    log = root / "executed.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def log_in(client: Any, name: str = "ana", password: str | None = None) -> Any:
    """Log ``client`` in; returns the response of the login POST (not followed)."""
    token = csrf_of(client.get("/login").text)
    form = {"csrf": token, "name": name, "password": password or PASSWORDS[name]}
    return client.post("/login", data=form, follow_redirects=False)


@contextlib.contextmanager
def served(
    root: Path, keys: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """``mir review serve`` on a free 127.0.0.1 port, as a child process; yields its URL."""
    port = free_port()
    command = [str(MIR_EXE), "review", "serve", "--port", str(port), "--project", str(root)]
    if keys is not None:
        command += ["--keys", str(keys)]
    log = root.parent / f"inbox-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=root,
            env={**os.environ, **(env or {})},
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"mir review serve exited:\n{log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/login", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("mir review serve not ready after 60 s") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
