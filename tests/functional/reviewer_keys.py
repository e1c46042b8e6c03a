"""A support lead who can sign, for tests that approve the example's refunds (its
``refund`` action requires a signed approval by a declared ``support_lead``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.reviewers import Reviewer, add_reviewer, generate_key, write_private_key


def sign_as(
    project: Path, keys: Path, monkeypatch: pytest.MonkeyPatch | None, name: str = "ana"
) -> Path:
    """Declare ``name`` a support lead of ``project`` with a new key written under
    ``keys`` (outside the project); with ``monkeypatch``, every `mir` the test runs
    signs with it (``MIR_REVIEWER_KEY_FILE``). Returns the key file."""
    key = generate_key()
    path = write_private_key(key, keys / f"{name}.key", project / ".mir")
    reviewer = Reviewer(name=name, roles=("support_lead",), public_key=key.public_key)
    add_reviewer(project, reviewer, replace=True)
    if monkeypatch is not None:
        monkeypatch.setenv("MIR_REVIEWER_KEY_FILE", str(path))
    return path
