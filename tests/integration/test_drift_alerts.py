"""Alerts are best effort: a command gets the payload on stdin; a failing one is a note."""

from __future__ import annotations

import json
import shlex
import sys

from mir.alerts import AlertSettings
from mir.alerts import send_alert as send


def test_the_command_gets_the_payload_on_stdin(tmp_path):
    out = tmp_path / "alert.json"
    code = f"import sys; open({str(out)!r}, 'w').write(sys.stdin.read())"
    settings = AlertSettings(command=f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}")
    assert send(settings, {"agent": "refunds.triage", "verdict": "warn"}) == []
    assert json.loads(out.read_text()) == {"agent": "refunds.triage", "verdict": "warn"}


def test_a_failing_target_is_a_note_never_an_error():
    settings = AlertSettings(command="/nonexistent/alert", webhook="http://127.0.0.1:9/x")
    notes = send(settings, {"agent": "a"})
    assert len(notes) == 2
    assert notes[0].startswith("alert command failed") and "alert webhook failed" in notes[1]
