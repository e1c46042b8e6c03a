"""`mir mcp serve` through the real executable and the official MCP SDK's own client:
stdio and streamable HTTP, on a copy of examples/support_desk answering from recorded
model replies (`--provider scripted`: fast, offline).

What a retried idempotency key must never do is checked where it would show: the
example's own ledger of refunds paid (one row per executed refund) and the flow's
trace (one final event, one completed execution)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIR_EXE, REPO
from tests.functional.reviewer_keys import sign_as

EXAMPLE = REPO / "examples" / "support_desk"
TOOL = "refunds.triage"


def _reply(name: str) -> str:
    return (EXAMPLE / "responses" / f"{name}.jsonl").read_text().strip()


def _ticket(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLE / "inputs" / f"{name}.json").read_text())


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """The example as committed (no state), with recorded replies answered in order."""
    root = tmp_path / "support_desk"
    ignore = shutil.ignore_patterns(".mir", "__pycache__", ".*_cache")
    shutil.copytree(EXAMPLE, root, ignore=ignore)
    return root


def _replies(root: Path, *names: str) -> None:
    (root / "replies.jsonl").write_text("".join(_reply(n) + "\n" for n in names))


SERVE = ("mcp", "serve", "--provider", "scripted", "--responses", "replies.jsonl")
ENV = {**os.environ, "MIR_USER": "mcp-client", "NO_COLOR": "1"}


def _stdio(root: Path) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=str(MIR_EXE), args=list(SERVE), cwd=str(root), env=ENV)


async def _session(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """One client connection: the tool listing, then each call's result, in order."""
    from mcp import Client

    async with Client(server) as client:
        results = [await client.list_tools()]
        for name, arguments in calls:
            results.append(await client.call_tool(name, arguments))
        return results


def _run(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    return asyncio.run(asyncio.wait_for(_session(server, *calls), timeout=120))


def _refunds_paid(root: Path) -> list[str]:
    ledger = root / ".mir" / "support_ledger.sqlite3"
    if not ledger.exists():
        return []
    with sqlite3.connect(ledger) as db:
        return [row[0] for row in db.execute("SELECT key FROM entries")]


def _events(root: Path, flow_id: str) -> list[dict[str, Any]]:
    shown = subprocess.run(
        [str(MIR_EXE), "traces", "show", flow_id, "--json"],
        cwd=root, env=ENV, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(shown.stdout)


def _ran_once(root: Path, flow_id: str) -> None:
    events = _events(root, flow_id)
    assert [e["step"] for e in events].count("final") == 1
    done = [e for e in events if e["step"] == "execute" and e["data"].get("phase") == "done"]
    assert len(done) == 1, [(e["step"], e["data"].get("phase")) for e in events]


def test_stdio_lists_the_agent_with_its_input_schema_and_decides(desk: Path):
    _replies(desk, "damaged_mug")
    listing, result = _run(_stdio(desk), (TOOL, _ticket("damaged_mug")))

    tools = {tool.name: tool for tool in listing.tools}
    assert set(tools) == {TOOL, "flow_status"}
    schema = tools[TOOL].input_schema
    assert {"ticket_id", "order_id", "category", "requested_amount", "message"} <= set(
        schema["properties"]
    )
    assert "order_id" in schema["required"] and "idempotency_key" in schema["properties"]
    assert "refund" in (tools[TOOL].description or "")

    assert not result.is_error, result.content
    record = result.structured_content
    assert record["status"] == "executed" and record["action"] == "refund"
    assert record["executed"] is True and record["pending"] is False
    assert record["flow_id"] in result.content[0].text and "executed" in result.content[0].text
    assert len(_refunds_paid(desk)) == 1
    _ran_once(desk, record["flow_id"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _http_server(root: Path, port: int) -> subprocess.Popen[str]:
    args = [str(MIR_EXE), *SERVE, "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(args, cwd=root, env=ENV, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"no server on port {port}: {proc.communicate()[1]}")


def test_streamable_http_serves_the_same_and_a_busy_port_is_one_line(desk: Path, run_mir):
    _replies(desk, "damaged_mug")
    port = _free_port()
    proc = _http_server(desk, port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        listing, result = _run(url, (TOOL, {**_ticket("damaged_mug"), "idempotency_key": "h1"}))
        busy = run_mir(*SERVE, "--http", f"127.0.0.1:{port}", cwd=desk)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)

    assert {tool.name for tool in listing.tools} == {TOOL, "flow_status"}
    assert not result.is_error and result.structured_content["status"] == "executed"
    assert len(_refunds_paid(desk)) == 1
    assert busy.returncode == 2 and "Traceback" not in busy.stderr
    assert busy.stderr.startswith("error:") and f"port {port} is in use" in busy.stderr
    assert f"http://127.0.0.1:{port}/mcp" in err and "Traceback" not in err


async def _race(servers: list[Any], arguments: dict[str, Any]) -> list[Any]:
    """The same call sent by one client per server, all at once."""
    return list(await asyncio.gather(*(_session(s, (TOOL, arguments)) for s in servers)))


def test_a_retried_key_decides_once_also_racing_and_after_a_restart(desk: Path):
    # each server process answers its first decision with the mug's reply (a refund)
    _replies(desk, "damaged_mug", "damaged_mug")
    keyed = {**_ticket("damaged_mug"), "idempotency_key": "ticket-T-1001"}

    # two servers (two processes) get the first call with the key at the same time
    raced = asyncio.run(asyncio.wait_for(_race([_stdio(desk), _stdio(desk)], keyed), 120))
    first, second = (results[1] for results in raced)
    assert not first.is_error and not second.is_error, (first.content, second.content)
    records = [first.structured_content, second.structured_content]
    assert {r["flow_id"] for r in records} == {records[0]["flow_id"]}
    assert sorted(r["replayed"] for r in records) == [False, True]
    assert all(r["status"] == "executed" for r in records)

    # a restarted server, asked twice more
    flow_id = records[0]["flow_id"]
    later = _run(_stdio(desk), (TOOL, keyed), (TOOL, keyed))[1:]
    assert [r.structured_content["flow_id"] for r in later] == [flow_id, flow_id]
    assert all(r.structured_content["replayed"] for r in later)
    assert len(_refunds_paid(desk)) == 1
    _ran_once(desk, flow_id)

    # a new key is a new decision: the control that the counting above can fail
    fresh = _run(_stdio(desk), (TOOL, {**keyed, "idempotency_key": "another"}))[1]
    assert fresh.structured_content["flow_id"] != flow_id
    assert fresh.structured_content["replayed"] is False


def test_concurrent_calls_in_one_server_share_one_flow(desk: Path):
    _replies(desk, "damaged_mug", "damaged_mug")
    keyed = {**_ticket("damaged_mug"), "idempotency_key": "one-server"}

    async def twice() -> list[Any]:
        from mcp import Client

        async with Client(_stdio(desk)) as client:
            return list(await asyncio.gather(*(client.call_tool(TOOL, keyed) for _ in range(2))))

    results = asyncio.run(asyncio.wait_for(twice(), 120))
    records = [r.structured_content for r in results]
    assert records[0]["flow_id"] == records[1]["flow_id"]
    assert sorted(r["replayed"] for r in records) == [False, True]
    assert len(_refunds_paid(desk)) == 1
    _ran_once(desk, records[0]["flow_id"])


def test_a_pending_flow_says_so_and_flow_status_polls_it(desk: Path, tmp_path: Path):
    _replies(desk, "blender_broken")  # a 149 EUR refund: the contract sends it to review
    keyed = {**_ticket("blender_broken"), "idempotency_key": "blender"}
    _, pending = _run(_stdio(desk), (TOOL, keyed))
    record = pending.structured_content
    assert not pending.is_error
    assert record["status"] == "pending_review" and record["pending"] is True
    assert record["finished"] is False and record["executed"] is False
    assert "review_rule:expensive_refund" in record["reasons"]
    assert "flow_status" in pending.content[0].text
    flow_id = record["flow_id"]

    _, waiting, again = _run(_stdio(desk), ("flow_status", {"flow_id": flow_id}), (TOOL, keyed))
    assert waiting.structured_content["status"] == "pending_review"
    assert waiting.structured_content["action"] == "refund"
    assert again.structured_content["flow_id"] == flow_id
    assert again.structured_content["pending"] is True and _refunds_paid(desk) == []

    key = sign_as(desk, tmp_path / "keys", None)
    approved = subprocess.run(
        [str(MIR_EXE), "approve", flow_id, "--key", str(key), "--by", "ana"],
        cwd=desk, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert approved.returncode == 0, approved.stderr

    _, done = _run(_stdio(desk), ("flow_status", {"flow_id": flow_id}))
    assert done.structured_content["status"] == "executed"
    assert done.structured_content["finished"] is True and len(_refunds_paid(desk)) == 1


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(desk: Path):
    _replies(desk, "damaged_mug")
    mug = _ticket("damaged_mug")
    _, bad, unknown, no_flow, odd_key, good, other_input = _run(
        _stdio(desk),
        (TOOL, {"order_id": 3}),
        ("refunds.nope", {}),
        ("flow_status", {"flow_id": "no-such-flow"}),
        (TOOL, {**mug, "idempotency_key": ""}),
        (TOOL, {**mug, "idempotency_key": "k"}),
        (TOOL, {**mug, "requested_amount": 20.0, "idempotency_key": "k"}),
    )
    for result in (bad, unknown, no_flow, odd_key, other_input):
        assert result.is_error and result.structured_content is None
        assert len(result.content) == 1 and "\n" not in result.content[0].text
    assert bad.content[0].text.startswith("input invalid: input.")
    assert "unknown tool 'refunds.nope'" in unknown.content[0].text
    assert "no flow 'no-such-flow'" in no_flow.content[0].text
    assert "idempotency_key" in odd_key.content[0].text
    assert "another input" in other_input.content[0].text
    assert not good.is_error and good.structured_content["status"] == "executed"
    assert len(_refunds_paid(desk)) == 1


def test_startup_errors_are_one_line_and_exit_2(run_mir, tmp_path: Path, desk: Path):
    outside = run_mir("mcp", "serve", cwd=tmp_path)
    bad_address = run_mir("mcp", "serve", "--http", "localhost", cwd=desk)
    bad_port = run_mir("mcp", "serve", "--http", "127.0.0.1:70000", cwd=desk)
    for result in (outside, bad_address, bad_port):
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("error:") and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert "no mir project found" in outside.stderr
    assert "not HOST:PORT" in bad_address.stderr and "port 70000" in bad_port.stderr
