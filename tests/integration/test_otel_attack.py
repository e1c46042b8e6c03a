"""Attacks on the live OTLP export's guarantees: a forked child never touches the
parent's pipe, nor, through it, a file of its own."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from mir.traces.domain import OtelSettings
from mir.traces.live import LiveExport
from tests.support.otlp_receiver import refused_url

LINE = '{"flow_id":"f","seq":0,"agent":"a","step":"final","status":"executed"}'


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_s_files_survive_the_parent_s_sender_being_let_go(tmp_path: Path):
    live = LiveExport(refused_url(), OtelSettings(timeout_s=0.5), tmp_path)
    try:
        live([LINE])  # the parent's sender starts: its pipe is an fd the child inherits
        pid = os.fork()
        if pid == 0:  # the child: a file of its own, likely on the pipe's old fd number
            code = 1
            try:
                with (tmp_path / "child.txt").open("w") as own:
                    live([LINE])  # the child's own sender starts (and lets the old go)
                    gc.collect()
                    own.write("still mine")
                    own.flush()
                    os.fstat(own.fileno())
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert (tmp_path / "child.txt").read_text() == "still mine"
    finally:
        live.close(timeout_s=0.5)
