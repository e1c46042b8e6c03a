"""`mir reviewers keygen | add | list | password` through the installed `mir`."""

from __future__ import annotations

import json
import os
import stat


def test_keygen_add_list_password(run_mir, app, tmp_path):
    keys = tmp_path / "keys"
    made = run_mir("reviewers", "keygen", "alice", "--out", str(keys / "alice.key"), cwd=app)
    assert made.returncode == 0, made.stderr
    public = made.stdout.strip()
    assert public.startswith("ed25519:") and "mir reviewers add alice" in made.stderr
    assert stat.S_IMODE(os.stat(keys / "alice.key").st_mode) == 0o600
    inside = run_mir("reviewers", "keygen", "bob", "--out", ".mir/bob.key", cwd=app)
    assert inside.returncode == 2 and "state folder" in inside.stderr
    assert not (app / ".mir" / "bob.key").exists()
    again = run_mir("reviewers", "keygen", "alice", "--out", str(keys / "alice.key"), cwd=app)
    assert again.returncode == 2 and "already exists" in again.stderr

    added = run_mir(
        "reviewers", "add", "alice", "--role", "support_lead", "--public-key", public, cwd=app
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    twice = run_mir("reviewers", "add", "alice", "--role", "x", "--public-key", public, cwd=app)
    assert twice.returncode == 2 and "already declared" in twice.stderr
    bad = run_mir("reviewers", "add", "bob", "--public-key", "ed25519:nope", cwd=app)
    assert bad.returncode == 2 and bad.stderr.count("error:") == 1

    pw = run_mir(
        "reviewers", "password", "alice", "--password-stdin", input="a long secret\n", cwd=app
    )  # fmt: skip
    assert pw.returncode == 0, pw.stderr
    assert "a long secret" not in (app / ".mir" / "reviewer-logins.json").read_text()
    typo = run_mir("reviewers", "password", "alcie", "--password-stdin", input="x" * 9, cwd=app)
    assert typo.returncode == 2 and "did you mean 'alice'" in typo.stderr

    listed = json.loads(run_mir("reviewers", "list", "--json", cwd=app).stdout)["reviewers"]
    assert [(r["name"], r["roles"], r["public_key"], r["login"]) for r in listed] == [
        ("alice", ["support_lead"], public, True)
    ]
    table = run_mir("reviewers", "list", cwd=app)
    assert "alice" in table.stdout and "support_lead" in table.stdout


def test_a_broken_reviewers_toml_is_one_error_line_per_problem(run_mir, app):
    (app / "reviewers.toml").write_text('[reviewers.a]\nrolez = []\npublic_key = "x"\n')
    done = run_mir("reviewers", "list", cwd=app)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "reviewers.toml:2: reviewers.a: unknown key 'rolez'" in done.stderr
    assert "reviewers.toml:3: reviewers.a: public_key" in done.stderr
