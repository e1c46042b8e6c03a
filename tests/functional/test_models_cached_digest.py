"""The eval response cache and a registry model's digest, through the installed ``mir``.

A cached answer belongs to the bytes that produced it: the cache is keyed on the file's
sha256 (the registered digest for a registry entry), and a registry file that no longer
has its digest is refused before any answer is replayed for it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from tests.support.projects import llama_route, runtime_project

SUITE = """\
agent: triage
description: two cases on the registry model
cases:
  - id: first
    input: {order_id: A1, amount: 10, message: "broken"}
  - id: second
    input: {order_id: A1, amount: 40, message: "never came"}
"""


def _desk(tmp_path: Path, tiny_gguf: Path) -> Path:
    model = tmp_path / "model.gguf"
    shutil.copy(tiny_gguf, model)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    registry = (
        f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
        f'artifact = "{model}"\nsha256 = "{digest}"\n'
    )
    root = runtime_project(tmp_path / "app", llama_route("triage"), registry=registry, retries=0)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    return root


def _eval(run_mir, root: Path) -> dict:
    done = run_mir("eval", "refunds.triage", "--format", "json", cwd=root)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout)


def _runs(report: dict) -> list[dict]:
    [suite] = report["suites"]
    return suite["runs"]


def test_a_gguf_edited_with_size_and_mtime_put_back_gets_no_cached_answer(
    run_mir, tmp_path, tiny_gguf
):
    # Broke: the cache named the file by path, size and mtime; one flipped byte with its
    # mtime put back replayed the answers recorded for the registered file, and no
    # sha256 check ran (a cached run never loads, so never verifies).
    root = _desk(tmp_path, tiny_gguf)
    first = _eval(run_mir, root)
    assert not any(run["cached"] for run in _runs(first))
    again = _eval(run_mir, root)
    assert all(run["cached"] for run in _runs(again)), "an unchanged file replays"

    model = tmp_path / "model.gguf"
    before = model.stat()
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with model.open("r+b") as handle:  # in place: same inode, same size
        handle.write(bytes(data))
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    tampered = _eval(run_mir, root)
    runs = _runs(tampered)
    assert not any(run["cached"] for run in runs), "answers replayed for another file"
    assert all(run["status"] == "fallback" for run in runs), runs
    assert all("model_integrity" in run["reasons"] for run in runs), runs


def test_the_same_bytes_under_another_path_share_the_cached_answers(run_mir, tmp_path, tiny_gguf):
    # The key is the content, not the path: a model moved (or a fresh checkout in another
    # folder) keeps its answers; the registered digest is what they belong to.
    root = _desk(tmp_path, tiny_gguf)
    _eval(run_mir, root)
    moved = tmp_path / "moved.gguf"
    shutil.move(tmp_path / "model.gguf", moved)
    registry = root / "models.toml"
    registry.write_text(registry.read_text().replace(str(tmp_path / "model.gguf"), str(moved)))
    assert all(run["cached"] for run in _runs(_eval(run_mir, root)))
