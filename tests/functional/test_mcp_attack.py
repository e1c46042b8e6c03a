"""``mir mcp serve`` attacked: odd ``--http`` values are one line, exit 2; hostile tool
names and flow ids are short one-line tool errors; a hostile key stays inside
``<state_dir>/mcp/`` and the server keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIR_EXE, REPO

EXAMPLE = REPO / "examples" / "support_desk"
TOOL = "refunds.triage"
SERVE = ("mcp", "serve", "--provider", "scripted", "--responses", "replies.jsonl")


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    reply = (EXAMPLE / "responses" / "damaged_mug.jsonl").read_text().strip()
    (root / "replies.jsonl").write_text(reply + "\n")
    return root


@pytest.mark.parametrize("address", ["127.0.0.1:\u00b2", "a" * 300 + ":8765"])
def test_odd_http_values_are_one_line_exit_2(run_mir, desk: Path, address: str):
    result = run_mir(*SERVE, "--http", address, cwd=desk)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.startswith("error:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_hostile_names_and_keys_are_short_errors_and_stay_in_the_mcp_folder(desk: Path):
    from mcp import Client, StdioServerParameters

    mug = json.loads((EXAMPLE / "inputs" / "damaged_mug.json").read_text())
    env = {**os.environ, "NO_COLOR": "1"}
    server = StdioServerParameters(command=str(MIR_EXE), args=list(SERVE), cwd=str(desk), env=env)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("flow_status", {"flow_id": "x" * 100_000}),
        ("n" * 100_000, {}),
        (TOOL, {**mug, "idempotency_key": "../../../outside\x00"}),
    ]

    async def session() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    long_flow, long_name, keyed = asyncio.run(asyncio.wait_for(session(), 120))
    for result in (long_flow, long_name):
        assert result.is_error and len(result.content) == 1
        assert "\n" not in result.content[0].text and len(result.content[0].text) < 400
    assert "unknown tool" in long_name.content[0].text
    assert not keyed.is_error and keyed.structured_content["status"] == "executed"
    made = sorted(p.relative_to(desk).as_posix() for p in desk.rglob("*") if "outside" in p.name)
    assert made == []
    keys = sorted(p.name.split(".")[0] for p in (desk / ".mir" / "mcp").iterdir())
    assert keys == [keyed.structured_content["flow_id"]] * 2
