"""``repeat`` is bounded (at most 100 runs of a case, in the suite, a case or
``--repeat``) and checked before anything runs; repeats are independent runs, never
answered from the response cache; pass^k, pass@k and flaky cases reach the table and
the HTML report. Through the installed ``mir`` on the fixture project."""

from __future__ import annotations

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

ONE_CASE = (
    "agent: triage\n{head}cases:\n  - id: a\n    input: {{order_id: A1, amount: 10, message: x}}\n"
    "{case}    expect: {{action: refund}}\n"
)


def write_suite(app: Path, *, head: str = "", case: str = "") -> Path:
    evals = app / "capabilities" / "refunds" / "evals"
    evals.mkdir(exist_ok=True)
    suite = evals / "triage.yaml"
    suite.write_text(ONE_CASE.format(head=head, case=case))
    return suite


def run_quickly(run_mir, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return run_mir(*args, cwd=cwd, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("mir eval kept building runs instead of refusing the repeat count")


@pytest.mark.parametrize(
    ("head", "case", "line"),
    [
        ("repeat: 1000000000\n", "", 2),
        ("", "    repeat: 1000000000\n", 5),
        ("repeat: 101\n", "", 2),
    ],
)
def test_a_huge_repeat_in_the_suite_is_refused_at_its_line(run_mir, app: Path, head, case, line):
    suite = write_suite(app, head=head, case=case)
    result = run_quickly(run_mir, "eval", "--provider", "rules", cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{suite}:{line}" in result.stderr and "repeat" in result.stderr
    assert "100" in result.stderr and "Traceback" not in result.stderr
    assert not (app / ".mir" / "traces").exists()  # nothing ran


@pytest.mark.parametrize("count", ["1000000000", "101", "0"])
def test_a_huge_repeat_option_is_one_line(run_mir, app: Path, count: str):
    write_suite(app)
    result = run_quickly(run_mir, "eval", "--provider", "rules", "--repeat", count, cwd=app)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert f"--repeat {count}" in line and "Traceback" not in result.stderr


def test_a_hundred_repeats_still_run(run_mir, app: Path):
    write_suite(app, head="repeat: 100\n")
    result = run_mir("eval", "--provider", "rules", "-f", "json", cwd=app)
    assert result.returncode == 0, result.stdout + result.stderr
    [summary] = json.loads(result.stdout)["suites"][0]["cases"]
    assert summary["runs"] == 100 and summary["pass_all"] is True


class FlakyModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible model on 127.0.0.1 that answers refund, deny, refund, ..."""

    asked: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FlakyModel.asked.append(body)
        action = "deny" if len(FlakyModel.asked) % 3 == 2 else "refund"
        decision = {"action": action, "confidence": 0.9, "amount": 10, "reason": "r"}
        answer = json.dumps(
            {
                "id": f"c{len(FlakyModel.asked)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fixture"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(decision)},
                    }
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky_model(app: Path):
    server = HTTPServer(("127.0.0.1", 0), FlakyModel)
    FlakyModel.asked = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    contract = app / "capabilities" / "refunds" / "agents" / "triage.yaml"
    port = server.server_address[1]
    contract.write_text(contract.read_text().replace("127.0.0.1:9/", f"127.0.0.1:{port}/"))
    yield FlakyModel.asked
    server.shutdown()


@pytest.mark.slow  # `import litellm` in the CLI process
def test_repeats_ask_the_model_again_and_find_the_flaky_case(run_mir, app: Path, flaky_model):
    # repeats 2..K were answered from the response cache with repeat 1's answer, so a
    # flaky model always looked stable
    write_suite(app)
    args = ("eval", "--provider", "litellm", "--repeat", "3")
    env = {"OPENAI_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = run_mir(*args, "-f", "json", cwd=app, env=env)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert len(flaky_model) == 3  # one model call per run
    [suite] = json.loads(result.stdout)["suites"]
    assert suite["flaky"] == ["a"]
    [case] = suite["cases"]
    assert (case["runs"], case["passes"], case["pass_all"], case["pass_any"]) == (3, 2, False, True)

    table = run_mir(*args, cwd=app, env=env)  # the first run is cached, the others ask
    assert len(flaky_model) == 5
    assert "flaky: a" in table.stdout
    assert "pass^k" in table.stdout and "pass@k" in table.stdout
    assert "pass^k (every run passed): 0/1 cases; pass@k (one run passed): 1/1" in table.stdout
    # nothing executes in an eval: the outcome says what would have; progress has an ETA
    assert "would execute refund" in table.stdout and "executed/" not in table.stdout
    assert ", ETA 0:" in table.stderr
