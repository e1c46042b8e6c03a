"""An OpenAI-compatible chat server on 127.0.0.1 that records every request body it
receives and answers as a model that copies what it was shown: the order id and the
first email placeholder of the last message go into its decision."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Recorder:
    url: str = ""
    bodies: list[bytes] = field(default_factory=list)

    def answer(self, body: dict) -> str:
        text = body["messages"][-1]["content"]
        order = re.search(r"ORD-\d+", text)
        email = re.search(r"<EMAIL_\d+>", text)
        return json.dumps(
            {
                "action": "refund",
                "confidence": 0.95,
                "order_id": order.group(0) if order else "none",
                "reply_to": email.group(0) if email else "none",
            }
        )


@contextmanager
def recording_server() -> Iterator[Recorder]:
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            recorder.bodies.append(raw)
            content = recorder.answer(json.loads(raw))
            reply = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": "recorder",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    recorder.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
