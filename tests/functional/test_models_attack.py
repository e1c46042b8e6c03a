"""Attacks on the model registry as merged: each test here broke once.

Concurrent `mir models` edits, hostile `models.toml` files and secrets in free text; each
names the failure it pins down."""

from __future__ import annotations

import hashlib
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir"))
    return root


def test_concurrent_registrations_lose_no_version_and_agree_with_history(run_mir, desk):
    # Broke: every process read the old file, the last write won, and the history kept
    # rows for versions the file no longer had (3 rows, 1 table), or failed on the
    # history's DuckDB lock. Edits now wait on .mir/models.lock.
    def register(i: int):
        return run_mir(
            "models", "register", "m", f"v{i}", "--provider", "litellm",
            "--artifact", f"openai/x{i}", "--by", f"p{i}", cwd=desk,
        )  # fmt: skip

    with ThreadPoolExecutor(6) as pool:
        done = list(pool.map(register, range(6)))
    assert [d.returncode for d in done] == [0] * 6, [d.stderr for d in done]
    text = (desk / "models.toml").read_text()
    assert sorted(v for v in range(6) if f'version = "v{v}"' in text) == list(range(6))
    history = run_mir("models", "history", "m", cwd=desk)
    assert history.returncode == 0, history.stderr
    assert sorted(line.split()[2] for line in history.stdout.splitlines()[1:]) == [
        f"v{i}" for i in range(6)
    ]


def test_a_same_size_edit_with_its_mtime_put_back_is_hashed_again(tmp_path, tiny_gguf):
    # Broke: the digest cache was keyed by (path, size, mtime) only, so a GGUF with one
    # byte changed and its mtime restored (os.utime, cp -p, rsync -t) passed as the file
    # that was hashed before, in this process and in the next one (.mir/cache/sha256.json).
    from mir.inference import FileHasher, ModelIntegrityError

    model = tmp_path / "m.gguf"
    shutil.copy(tiny_gguf, model)
    cache = tmp_path / ".mir" / "cache" / "sha256.json"
    good = hashlib.sha256(model.read_bytes()).hexdigest()
    hasher = FileHasher()
    hasher.verify(model, good, cache)
    before = model.stat()
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with model.open("r+b") as handle:  # in place: same inode, same size
        handle.write(bytes(data))
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(ModelIntegrityError):
        hasher.verify(model, good, cache)
    with pytest.raises(ModelIntegrityError):
        FileHasher().verify(model, good, cache)  # a new process, reading the file cache


_ENTRY = '[[models]]\nname = "m"\nversion = "1"\nartifact = "a.gguf"\n'


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # Broke: pydantic's lax mode read the string "0.2" as a share and ran the canary.
        (_ENTRY + 'stage = "canary"\nshare = "0.2"\n', "share: Input should be a valid number"),
        # Broke: true became 1.0 and the message said "less than 1".
        (_ENTRY + 'stage = "canary"\nshare = true\n', "share: Input should be a valid number"),
        # Broke: a float context (1e9) was truncated to an int and accepted.
        (_ENTRY + "context = 1e9\n", "context"),
        # Broke: a misspelt value or key got no did-you-mean (and the header's line).
        (_ENTRY + 'stage = "prodution"\n', "(did you mean 'production'?)"),
        (_ENTRY + "contxt = 2048\n", "unknown key 'contxt' (did you mean 'context'?)"),
        # Broke: an empty artifact was accepted (and listed as '-').
        ('[[models]]\nname = "m"\nversion = "1"\nartifact = ""\n', "artifact"),
    ],
)
def test_a_hand_edited_value_of_the_wrong_type_is_one_line_and_nothing_is_written(
    run_mir, desk, text, says
):
    registry = desk / "models.toml"
    registry.write_text(text)
    for args in (
        ("models", "list"),
        ("models", "register", "m", "2", "--provider", "litellm", "--artifact", "openai/x"),
    ):
        done = run_mir(*args, cwd=desk)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        # The line of the offending key (the entry's last line here), not its header.
        assert f"models.toml:{text.count(chr(10))}:" in done.stderr, done.stderr
        assert says in done.stderr, done.stderr
        assert registry.read_text() == text


def test_a_registry_that_is_not_utf8_is_one_line_for_every_edit(run_mir, desk):
    # Broke: `list` said "cannot read", but `register` and `promote` read the file
    # themselves and died with a UnicodeDecodeError traceback.
    registry = desk / "models.toml"
    data = b"\xff\xfe" + _ENTRY.encode()
    registry.write_bytes(data)
    for args in (
        ("models", "register", "m", "2", "--provider", "litellm", "--artifact", "openai/x"),
        ("models", "promote", "m", "1", "--to", "shadow"),
        ("models", "rollback", "m"),
    ):
        done = run_mir(*args, cwd=desk)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert "cannot read the model registry" in done.stderr, done.stderr
        assert registry.read_bytes() == data


def test_a_route_naming_an_empty_version_is_refused_at_load(run_mir, desk):
    # Broke: `model: m@` parsed as `m` and silently decided on the production version.
    (desk / "models.toml").write_text(_ENTRY + 'stage = "production"\n')
    contract = desk / "capabilities/refunds/agents/triage.yaml"
    contract.write_text(contract.read_text().replace("model: default", "model: m@"))
    done = run_mir("run", "agent", "refunds.triage", "-i", "@inputs/damaged_mug.json", cwd=desk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'m@' has an empty version" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


KEY = "sk-proj-" + "Q7v2" * 10


@pytest.mark.parametrize(
    "args",
    [
        ("register", "m", "2", "--provider", "litellm", "--artifact", "openai/x", "--notes", KEY),
        ("register", "m", "2", "--provider", "litellm", "--artifact", "openai/x", "--why", KEY),
        ("promote", "m", "1", "--to", "shadow", "--why", f"api_key={KEY}"),
        ("promote", "m", "1", "--to", "shadow", "--by", f"Bearer {KEY}"),
        ("retire", "m", "1", "--why", "rotated, old one was hunter2-hunter2"),
    ],
)
def test_a_secret_in_free_text_is_refused_before_anything_is_written(run_mir, desk, args):
    # Broke: --why/--by/--notes went unredacted into the committed models.toml and
    # .mir/models.duckdb (`mir models history` printed the key); traces would redact it.
    registry = desk / "models.toml"
    registry.write_text(_ENTRY)
    done = run_mir("models", *args, cwd=desk, env={"OLD_DB_PASSWORD": "hunter2-hunter2"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "looks like it holds a secret" in done.stderr
    assert KEY not in done.stderr and "hunter2" not in done.stderr
    assert registry.read_text() == _ENTRY
    history = run_mir("models", "history", "m", cwd=desk)
    assert KEY not in history.stdout and "hunter2" not in history.stdout


def test_moving_a_version_to_the_stage_it_is_in_records_nothing(run_mir, desk):
    # Broke: `promote m 1 --to shadow` twice wrote a "shadow -> shadow" history row (and
    # `retire` twice a "retired -> retired" one): the history claimed changes never made.
    registry = desk / "models.toml"
    registry.write_text(_ENTRY.replace('"a.gguf"', '"openai/x"\nprovider = "litellm"'))
    assert run_mir("models", "promote", "m", "1", "--to", "shadow", cwd=desk).returncode == 0
    text = registry.read_text()
    for args in (("promote", "m", "1", "--to", "shadow"),):
        done = run_mir("models", *args, cwd=desk)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "m@1 is already shadow" in done.stderr
    assert registry.read_text() == text
    assert run_mir("models", "retire", "m", "1", cwd=desk).returncode == 0
    done = run_mir("models", "retire", "m", "1", cwd=desk)
    assert done.returncode == 2 and "already retired" in done.stderr, done.stderr
    history = run_mir("models", "history", "m", cwd=desk).stdout.splitlines()[1:]
    # (the first row: the hand-written file's starting point, recorded by mir)
    assert len(history) == 3 and " mir " in history[0], history
    assert [line.split()[3:5] for line in history[1:]] == [
        ["candidate", "shadow"],
        ["shadow", "retired"],
    ], history


def test_history_of_a_misspelt_name_says_it_is_unknown(run_mir, desk):
    # Broke: `mir models history qwn` printed "no history for qwn" and exited 0.
    (desk / "models.toml").write_text(_ENTRY)
    done = run_mir("models", "history", "mm", cwd=desk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unknown model 'mm' (registry names: m)" in done.stderr
    done = run_mir("models", "history", "m", cwd=desk)  # known, never edited: fine
    assert done.returncode == 0 and "no history for m" in done.stdout


def test_a_mir_path_that_is_not_a_folder_is_one_line(run_mir, desk):
    # Broke: .mir/ (the edit lock's and the history's folder) unusable -> an OSError
    # traceback; it is a config error like a locked history, and nothing is written.
    (desk / "models.toml").write_text(_ENTRY)
    (desk / ".mir").write_text("not a folder")
    done = run_mir("models", "promote", "m", "1", "--to", "shadow", cwd=desk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "edit lock" in done.stderr
    assert (desk / "models.toml").read_text() == _ENTRY
