"""``mir reviewers`` use cases: a bad name is a usage error (exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.reviewers import declare, make_key


def test_a_bad_name_for_a_new_key_is_a_usage_error(tmp_path: Path):
    with pytest.raises(UsageError) as caught:
        make_key("bad!name", out=tmp_path / "k.key", project=None)
    assert str(caught.value).startswith("invalid reviewer name 'bad!name'")
    assert not (tmp_path / "k.key").exists()


def test_a_bad_key_when_declaring_is_a_usage_error(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.mir]\n", encoding="utf-8")
    with pytest.raises(UsageError):
        declare("alice", roles=["support"], public_key="rsa:nope", replace=False, project=tmp_path)
    assert not (tmp_path / "reviewers.toml").exists()
