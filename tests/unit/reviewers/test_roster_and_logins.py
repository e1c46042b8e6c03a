"""reviewers.toml (file:line errors, all at once), keys on disk, and hashed web logins."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mir.errors import ConfigError, UsageError
from mir.reviewers import (
    Reviewer,
    add_reviewer,
    check_login,
    generate_key,
    load_reviewers,
    load_signing_key,
    reviewer_named,
    set_password,
    write_private_key,
)

KEY = generate_key().public_key


def test_every_problem_of_reviewers_toml_is_listed_at_its_line(tmp_path):
    (tmp_path / "reviewers.toml").write_text(
        "[reviewers.alice]\n"
        'roles = ["lead"]\n'
        'public_key = "ed25519:short"\n'
        "\n"
        "[reviewers.bob]\n"
        'role = ["lead"]\n'
        f'public_key = "{KEY}"\n'
        "[reviewer]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_reviewers(tmp_path)
    lines = str(caught.value).splitlines()
    path = tmp_path / "reviewers.toml"
    assert any(line.startswith(f"{path}:3: reviewers.alice: public_key") for line in lines), lines
    assert f"{path}:6: reviewers.bob: unknown key 'role' (did you mean 'roles'?)" in lines
    assert any(line.startswith(f"{path}:8: unknown top-level key 'reviewer'") for line in lines)


def test_an_unknown_reviewer_name_says_who_is_declared(tmp_path):
    add_reviewer(tmp_path, Reviewer(name="alice", roles=("lead",), public_key=KEY))
    with pytest.raises(UsageError, match=r"'alcie' is not a reviewer.*did you mean 'alice'"):
        reviewer_named(load_reviewers(tmp_path), "alcie", tmp_path)


def test_adding_keeps_comments_and_never_replaces_silently_or_shares_a_key(tmp_path):
    (tmp_path / "reviewers.toml").write_text("# who reviews refunds\n")
    add_reviewer(tmp_path, Reviewer(name="alice", roles=("lead",), public_key=KEY))
    with pytest.raises(UsageError, match="already declared"):
        add_reviewer(tmp_path, Reviewer(name="alice", roles=("x",), public_key=KEY))
    with pytest.raises(UsageError, match="already 'alice'"):
        add_reviewer(tmp_path, Reviewer(name="bob", public_key=KEY))
    old = add_reviewer(tmp_path, Reviewer(name="alice", roles=("x",), public_key=KEY), replace=True)
    assert old is not None and old.roles == ("lead",)
    assert (tmp_path / "reviewers.toml").read_text().startswith("# who reviews refunds\n")
    assert load_reviewers(tmp_path)["alice"].roles == ("x",)


def test_a_private_key_is_0600_never_in_the_state_folder_never_overwritten(tmp_path, monkeypatch):
    key = generate_key()
    state = tmp_path / "project" / ".mir"
    with pytest.raises(UsageError, match="state folder"):
        write_private_key(key, state / "keys" / "a.key", state)
    with pytest.raises(UsageError, match="state folder"):  # a path that only resolves into it
        state.mkdir(parents=True)
        write_private_key(key, tmp_path / "project" / "x" / ".." / ".mir" / "a.key", state)
    path = write_private_key(key, tmp_path / "keys" / "a.key", state)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(UsageError, match="already exists"):
        write_private_key(generate_key(), path, state)
    assert load_signing_key(path).public_key == key.public_key
    monkeypatch.setenv("MIR_REVIEWER_KEY", path.read_text())
    assert load_signing_key(None).public_key == key.public_key
    monkeypatch.setenv("MIR_REVIEWER_KEY_FILE", str(path))
    assert load_signing_key(None).public_key == key.public_key
    monkeypatch.delenv("MIR_REVIEWER_KEY_FILE")
    monkeypatch.setenv("MIR_REVIEWER_KEY", "garbage")
    with pytest.raises(UsageError, match="MIR_REVIEWER_KEY"):
        load_signing_key(None)


def test_logins_are_hashed_and_only_declared_reviewers_check(tmp_path):
    state = tmp_path / ".mir"
    add_reviewer(tmp_path, Reviewer(name="alice", roles=("lead",), public_key=KEY))
    with pytest.raises(UsageError):
        set_password(tmp_path, state, "mallory", "long enough secret")
    set_password(tmp_path, state, "alice", "correct horse battery")
    text = (state / "reviewer-logins.json").read_text()
    assert "correct horse" not in text
    assert stat.S_IMODE(os.stat(state / "reviewer-logins.json").st_mode) == 0o600
    assert check_login(tmp_path, state, "alice", "correct horse battery")
    assert not check_login(tmp_path, state, "alice", "correct horse batterY")
    assert not check_login(tmp_path, state, "bob", "correct horse battery")
    data = json.loads(text)
    data["logins"]["alice"]["scrypt"]["n"] = 2**30  # an edit must not make a check cost minutes
    (state / "reviewer-logins.json").write_text(json.dumps(data))
    assert not check_login(tmp_path, state, "alice", "correct horse battery")
    (tmp_path / "reviewers.toml").write_text("")  # alice no longer declared
    assert not check_login(tmp_path, state, "alice", "correct horse battery")


def test_no_roster_means_no_declared_reviewers(tmp_path: Path):
    assert load_reviewers(tmp_path) == {}
