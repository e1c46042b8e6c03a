"""`mir traces verify` remembers the reviews it judged ok, and whoever can edit the project
(the trace store and `.mir/reviews/verified.txt`) but not the verifying user's state
folder cannot make it remember a forged one."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from mir.audit import review_audit
from mir.project import load_project_at
from mir.traces import TraceStore
from tests.functional.test_review_identity import approve, declare, edit_review, pending, require

CACHE = Path(".mir") / "reviews" / "verified.txt"


def cache_as(monkeypatch, app: Path, state_home: Path) -> None:
    """A verifier patched to judge every review ok, keyed by ``state_home``'s secret: the
    attacker's best cache lines (with the victim's state home it holds the secret)."""
    with monkeypatch.context() as patched:
        patched.setenv("XDG_STATE_HOME", str(state_home))
        patched.setattr(review_audit, "_judge", lambda *args: True)
        project = load_project_at(app)
        with TraceStore.for_project(project) as store:
            review_audit.audit_reviews(project, store)


@pytest.fixture
def forged(run_mir, app: Path, tmp_path: Path) -> str:
    """A flow approved with a valid signature, verified (so cached), then its signed
    statement edited in the store (which breaks the hash chain too: verify then exits 1
    whatever the reviews' verdict, so the tests read the reviews' own lines)."""
    require(app, "{roles: [lead], count: 1, signed: true}")
    ana = declare(run_mir, app, tmp_path, "ana")
    flow = pending(run_mir, app)
    assert approve(run_mir, app, flow, "ana", ana).returncode == 0
    first = run_mir("traces", "verify", cwd=app)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (app / CACHE).stat().st_size > 0

    def edited(data):
        data["statement"]["at"] = data["at"] = "2026-01-01T00:00:00+00:00"

    edit_review(app, flow, edited)
    return flow


def named(done, flow: str) -> bool:
    return any(
        line.startswith(f"flow {flow}") and "forged" in line for line in done.stdout.splitlines()
    )


def test_a_cache_line_forged_without_the_users_secret_is_verified_again(
    run_mir, app, forged, tmp_path, monkeypatch
):
    cache_as(monkeypatch, app, tmp_path / "attacker-state")
    with (app / CACHE).open("a") as out:  # and the old, unkeyed form of a line
        for line in (app / CACHE).read_text().splitlines():
            out.write(hashlib.sha256(line.encode()).hexdigest() + "\tana\tapprove\t1\n")
    done = run_mir("traces", "verify", cwd=app)
    assert done.returncode == 1 and named(done, forged), done.stdout + done.stderr


def test_only_the_holder_of_the_secret_can_vouch_for_a_review_and_full_ignores_it(
    run_mir, app, forged, monkeypatch
):
    # The control: the same patched verifier keyed by the victim's own secret is trusted
    # (the tags match exactly), which is why that secret never lives in the project.
    # (The chain check still sees the edited segment line: only the review half passes.)
    cache_as(monkeypatch, app, Path(os.environ["XDG_STATE_HOME"]))
    vouched = run_mir("traces", "verify", cwd=app)
    assert "reviews: 1 checked, 1 signed: ok" in vouched.stdout and not named(vouched, forged)
    full = run_mir("traces", "verify", "--full", cwd=app)
    assert full.returncode == 1 and named(full, forged)


def test_the_secret_is_private_and_one_others_may_read_is_not_trusted(
    run_mir, app, forged, tmp_path, monkeypatch
):
    home = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(home)}
    key = home / "mir" / "verify-cache.key"
    first = run_mir("traces", "verify", cwd=app, env=env)
    assert first.returncode == 1 and named(first, forged)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    cache_as(monkeypatch, app, home)  # vouched for by the holder of this secret
    assert "1 signed: ok" in run_mir("traces", "verify", cwd=app, env=env).stdout
    key.chmod(0o644)  # anyone may read it now: it vouches for nothing
    done = run_mir("traces", "verify", cwd=app, env=env)
    assert done.returncode == 1 and named(done, forged)
    said = " ".join(done.stdout.split())
    assert "verify-cache.key is not trusted (others may read or write it)" in said


def test_signatures_verified_over_workers_are_judged_as_one_after_the_other(
    run_mir, app, forged, tmp_path, monkeypatch
):
    from mir.reviewers import batch

    good = pending(run_mir, app)
    assert approve(run_mir, app, good, "ana", tmp_path / "keys" / "ana.key").returncode == 0
    project = load_project_at(app)
    found = []
    for workers in (1, 2):
        monkeypatch.setattr(batch, "PARALLEL_MIN", 1)
        monkeypatch.setattr(batch, "workers", lambda workers=workers: workers)
        with TraceStore.for_project(project) as store:
            audit = review_audit.audit_reviews(project, store, full=True)
        found.append((audit.reviews, audit.signed, [(f.flow_id, f.kind) for f in audit.findings]))
    assert found[0] == found[1] == (2, 2, [(forged, "forged"), (forged, "short")])


def test_a_state_folder_inside_the_project_or_a_linked_cache_file_is_not_used(
    run_mir, app, forged, tmp_path
):
    inside = {"XDG_STATE_HOME": str(app / ".mir" / "state")}
    done = run_mir("traces", "verify", cwd=app, env=inside)
    said = " ".join(done.stdout.split())
    assert named(done, forged) and "is inside the project: not a secret" in said
    # the cache file replaced by a link to a file of the user's: never written through
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    (app / CACHE).unlink()
    (app / CACHE).symlink_to(victim)
    good = pending(run_mir, app)
    assert approve(run_mir, app, good, "ana", tmp_path / "keys" / "ana.key").returncode == 0
    again = run_mir("traces", "verify", cwd=app)
    assert named(again, forged) and victim.read_text() == "mine\n"
