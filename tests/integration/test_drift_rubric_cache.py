"""Rubric drift's judge answers are cached: a second `mir drift --rubrics` over the same
windows (a watch loop's next tick) grades the same sampled decisions from the response
cache in `.mir/cache`, without asking the model again. The model is a tiny
OpenAI-compatible server on 127.0.0.1 that counts the questions it gets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = "capabilities/refunds/agents/triage.yaml"
pytestmark = pytest.mark.slow  # `import litellm` in the CLI process


class Model(BaseHTTPRequestHandler):
    asked: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Model.asked.append(body)
        grade = {"reason": "fits", "verdict": "pass", "score": 0.8, "confidence": 0.9}
        answer = json.dumps(
            {
                "id": f"c{len(Model.asked)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(grade)},
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
def model():
    server = HTTPServer(("127.0.0.1", 0), Model)
    Model.asked = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", Model.asked
    server.shutdown()


def test_a_second_run_grades_from_the_cache(run_mir, tmp_path: Path, model):
    api_base, asked = model
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    script = root / "scripts" / "drift_month.py"
    done = subprocess.run(
        [sys.executable, str(script), "--project", str(root), "--per-day", "20"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    contract = root / CONTRACT
    contract.write_text(
        contract.read_text()
        + "drift:\n  rubrics:\n    - name: reason_fits\n      rubric: Fits the ticket.\n"
        + "      path: reason\n      sample: 6\n      min_samples: 5\n"
        + f"      judge: {{provider: litellm, model: openai/fake, api_base: '{api_base}', "
        + "api_key_env: FAKE_KEY}\n"
    )
    args = ("drift", "triage", "--window", "7d", "--reference", "21d", "--rubrics")
    env = {"FAKE_KEY": "sk-test"}
    first = run_mir(*args, "--format", "json", cwd=root, env=env)
    assert first.returncode in (0, 1), first.stderr
    [metric] = [
        m
        for m in json.loads(first.stdout)["agents"][0]["metrics"]
        if m["metric"] == "rubric:reason_fits"
    ]
    assert (metric["reference_n"], metric["current_n"]) == (6, 6)
    assert metric["verdict"] == "ok" and metric["value"] == 0.0
    assert len(asked) == 12
    second = run_mir(*args, "--format", "json", cwd=root, env=env)
    assert second.returncode == first.returncode, second.stderr
    assert len(asked) == 12  # every judgement came from .mir/cache
    assert (root / ".mir" / "cache").is_dir()
