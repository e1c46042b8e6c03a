"""Integrity before load: a registry entry's sha256 is checked before
llama.cpp opens the GGUF; a tampered file is refused and the flow falls back."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from mir.inference import FILE_HASHER
from mir.inference.llama import MODEL_CACHE
from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.integration.test_models_runtime import _project

ORDER = {"order_id": "A1", "amount": 40, "message": "x"}


def _registry(gguf: Path, sha256: str) -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
        f'artifact = "{gguf}"\nsha256 = "{sha256}"\n'
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_tampered_gguf_is_refused_before_load_and_the_flow_falls_back(tmp_path, tiny_gguf):
    tampered = tmp_path / "tampered.gguf"
    data = bytearray(tiny_gguf.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tampered.write_bytes(bytes(data))
    root = _project(tmp_path, "triage", _registry(tampered, _sha(tiny_gguf)))
    store = TraceStore(tmp_path / "traces")
    MODEL_CACHE.clear()
    loads = MODEL_CACHE.loads
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        record = agent.decide(ORDER)
    assert MODEL_CACHE.loads == loads  # never handed to llama.cpp
    assert record.status == "fallback", record
    assert "model_integrity" in record.reasons
    infer = [e for e in store.flow(record.flow_id) if e.step == "infer"]
    assert list(infer[0].reasons) == ["model_integrity"]
    error = infer[0].data["error"]
    assert str(tampered) in error and _sha(tiny_gguf) in error and _sha(tampered) in error
    assert "\n" not in error
    store.close()


def test_a_good_file_is_hashed_once_across_two_loads_and_processes(tmp_path, tiny_gguf):
    good = tmp_path / "good.gguf"
    shutil.copy(tiny_gguf, good)
    root = _project(tmp_path, "triage", _registry(good, _sha(good)))
    store = TraceStore(tmp_path / "traces")
    before = FILE_HASHER.hashes
    for _ in range(2):
        with load_agent("refunds.triage", project=root, traces=store) as agent:
            record = agent.decide(ORDER)
        assert "model_integrity" not in record.reasons, record
    assert FILE_HASHER.hashes == before + 1
    cache = json.loads((root / ".mir/cache/sha256.json").read_text())
    assert _sha(good) in cache.values()
    # A new process (its in-process cache empty) reads the file cache: no re-hash.
    FILE_HASHER.clear()
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        agent.decide(ORDER)
    assert FILE_HASHER.hashes == before + 1
    # A corrupt cache file is ignored: the file is hashed again, and still accepted.
    FILE_HASHER.clear()
    (root / ".mir/cache/sha256.json").write_text("{not json")
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        record = agent.decide(ORDER)
    assert FILE_HASHER.hashes == before + 2
    assert "model_integrity" not in record.reasons
    store.close()
