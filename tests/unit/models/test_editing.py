"""Editing models.toml: stage moves, history rows, comments kept, file unchanged on error."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import ConfigError, MirUserError
from mir.models import Stage, changes, read_registry, rollback, set_stage

REGISTRY = """\
# our models
[[models]]
name = "qwen"  # the small one
version = "1"
stage = "production"
artifact = "models/q1.gguf"

[[models]]
name = "qwen"
version = "2"
artifact = "models/q2.gguf"

[[models]]
name = "qwen"
version = "0"
stage = "retired"
artifact = "models/q0.gguf"
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "models.toml").write_text(REGISTRY)
    return tmp_path


def test_promotion_moves_the_previous_production_to_candidate_and_keeps_comments(root):
    entry = set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="better")
    assert entry.stage == Stage.PRODUCTION
    registry = read_registry(root)
    assert registry.get("qwen", "1").stage == Stage.CANDIDATE
    text = (root / "models.toml").read_text()
    assert "# our models" in text and "# the small one" in text
    rows = [r for r in changes(root, "qwen") if r.by != "mir"]  # not the starting point
    assert [(r.version, r.from_stage, r.to_stage, r.by) for r in rows] == [
        ("1", "production", "candidate", "ana"),
        ("2", "candidate", "production", "ana"),
    ]


def test_canary_share_is_written_and_removed_when_it_leaves(root):
    set_stage(root, "qwen", "2", Stage.CANARY, by="ana", why="try", share=0.2)
    assert read_registry(root).get("qwen", "2").share == 0.2
    set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="ok")
    assert read_registry(root).get("qwen", "2").share is None


@pytest.mark.parametrize(
    ("version", "stage", "share"),
    [
        ("0", Stage.PRODUCTION, None),
        ("9", Stage.SHADOW, None),
        ("2", Stage.CANARY, 1.5),
        ("2", Stage.CANARY, None),
        ("2", Stage.SHADOW, 0.5),
    ],
)
def test_bad_moves_leave_the_file_unchanged(root, version, stage, share):
    with pytest.raises(MirUserError):
        set_stage(root, "qwen", version, stage, by="ana", why="x", share=share)
    assert (root / "models.toml").read_text() == REGISTRY
    assert changes(root) == []


def test_a_corrupt_history_is_one_config_error_and_the_file_is_unchanged(root):
    (root / ".mir").mkdir()
    (root / ".mir" / "models.duckdb").write_bytes(b"not a database" * 100)
    with pytest.raises(ConfigError, match="model history"):
        set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="x")
    assert (root / "models.toml").read_text() == REGISTRY


def test_rollback_returns_to_the_previous_production(root):
    # qwen@1 is production in the hand-written file: no history row put it there.
    set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="new")
    entry = rollback(root, "qwen", by="bo", why="worse")
    assert entry.version == "1"
    assert read_registry(root).get("qwen", "2").stage == Stage.CANDIDATE


def test_a_move_decided_on_an_old_read_does_not_demote_what_changed_since(root):
    # The automatic rollback read qwen@2 as a canary; meanwhile someone promoted it to
    # production. Before `from_stage`, its set_stage(SHADOW) demoted the new production.
    set_stage(root, "qwen", "2", Stage.CANARY, by="ana", why="try", share=0.1)
    set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="good")
    text = (root / "models.toml").read_text()
    rows = len(changes(root, "qwen"))
    with pytest.raises(MirUserError, match="no longer canary"):
        set_stage(root, "qwen", "2", Stage.SHADOW, by="auto", why="x", from_stage=Stage.CANARY)
    assert (root / "models.toml").read_text() == text
    assert len(changes(root, "qwen")) == rows


def test_a_stage_changed_outside_mir_is_recorded_before_the_next_edit(root):
    """models.toml changed without its history (a hand edit, a merged pull request, or a
    kill between the file and the history commit): the next edit records what it found,
    so the history keeps telling how the file got where it is."""
    set_stage(root, "qwen", "2", Stage.CANARY, by="ana", why="try", share=0.2)
    path = root / "models.toml"
    # by hand: version 2 straight to production, version 1 retired
    text = path.read_text()
    text = text.replace('stage = "production"', 'stage = "retired"', 1)
    text = text.replace('stage = "canary"\nshare = 0.2', 'stage = "production"')
    path.write_text(text)
    assert read_registry(root).get("qwen", "2").stage == Stage.PRODUCTION
    rollback_target = set_stage(root, "qwen", "2", Stage.CANDIDATE, by="bo", why="pull it")
    assert rollback_target.stage == Stage.CANDIDATE
    rows = [(r.version, r.from_stage, r.to_stage, r.by) for r in changes(root, "qwen")]
    assert ("2", "canary", "production", "mir") in rows
    assert ("1", "production", "retired", "mir") in rows
    found = [r for r in changes(root, "qwen") if r.why and "without a history" in r.why]
    assert len(found) == 2
    # the found rows come before the edit that found them
    assert rows.index(("2", "canary", "production", "mir")) < rows.index(
        ("2", "production", "candidate", "bo")
    )
    # and once recorded, nothing is found again
    set_stage(root, "qwen", "2", Stage.SHADOW, by="bo", why="again")
    again = [r for r in changes(root, "qwen") if r.why and "without a history" in r.why]
    assert again == found


def test_a_history_first_used_on_an_existing_file_starts_from_what_it_holds(root):
    set_stage(root, "qwen", "2", Stage.PRODUCTION, by="ana", why="first")
    rows = [(r.version, r.from_stage, r.to_stage, r.by) for r in changes(root, "qwen")]
    assert rows[:3] == [
        ("1", None, "production", "mir"),
        ("2", None, "candidate", "mir"),
        ("0", None, "retired", "mir"),
    ]
    assert rows[3:] == [
        ("1", "production", "candidate", "ana"),
        ("2", "candidate", "production", "ana"),
    ]


@pytest.mark.parametrize(
    ("edit", "refused"),
    [
        (('artifact = "models/q2.gguf"', 'artifact = "models/q3.gguf"'), True),
        (('artifact = "models/q2.gguf"', 'artifact = "models/q2.gguf"\ncontext = 512'), True),
        (('version = "2"\n', 'version = "2"\nstage = "shadow"\n'), False),  # moved, same file
    ],
)
def test_a_move_bound_to_a_tested_entry_is_refused_if_the_entry_changed(root, edit, refused):
    from mir.models import EntryChanged

    tested = read_registry(root).get("qwen", "2")
    path = root / "models.toml"
    path.write_text(path.read_text().replace(*edit))
    before = path.read_bytes()
    if not refused:
        entry = set_stage(root, "qwen", "2", Stage.PRODUCTION, by="a", why="", tested=tested)
        assert entry.stage == Stage.PRODUCTION
        return
    with pytest.raises(EntryChanged, match=r"changed in models\.toml while its gate ran"):
        set_stage(root, "qwen", "2", Stage.PRODUCTION, by="a", why="", tested=tested)
    assert path.read_bytes() == before
