"""Approvals from the page are the logged-in reviewer's, signed with the key the server
holds for them: a signature-required action executes on a valid signature of that key,
refuses a reviewer the server holds no key for, counts M-of-N distinct reviewers, and
never lets the requester approve their own flow."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.project import find_project
from mir.reviewers import judge_review, load_reviewers, load_signing_key
from mir.traces import TraceStore
from tests.support.inbox import csrf_of, executed, inbox_project, log_in, pend, refund, require

testclient = pytest.importorskip("starlette.testclient")


def _client(root: Path, keys: Path):
    from mir.inbox import create_app

    return testclient.TestClient(create_app(root, keys), follow_redirects=False)


def _approve(client, flow: str, reason: str = "checked") -> object:
    token = csrf_of(client.get(f"/flows/{flow}").text)
    return client.post(f"/flows/{flow}/approve", data={"csrf": token, "reason": reason})


def _reviews(root: Path, flow: str) -> list:
    with TraceStore.for_project(find_project(root)) as store:
        return [e for e in store.flow(flow) if e.step == "review"]


def test_a_page_approval_carries_a_valid_signature_of_the_reviewers_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    require(root, "{roles: [support], count: 1, signed: true}")
    signed, unsigned = pend(root, refund(amount=40), refund(amount=45))
    (keys / "bo.key").unlink()  # the server holds no key for bo
    with _client(root, keys) as ana:
        log_in(ana, "ana")
        page = ana.get(f"/flows/{signed}").text
        assert "signed with the key this server holds for" in page
        assert _approve(ana, signed).status_code == 303
        assert f"{signed} approved: executed" in ana.get("/").text
    with _client(root, keys) as bo:
        log_in(bo, "bo")
        assert "This server holds no key for" in bo.get(f"/flows/{unsigned}").text
        refused = _approve(bo, unsigned)
        assert refused.status_code == 400 and "unsigned" in refused.text
        assert bo.get(f"/flows/{unsigned}").status_code == 200  # still waits
    assert [e["params"]["amount"] for e in executed(root)] == [40]
    [review] = _reviews(root, signed)
    assert review.data["by"] == "ana" and review.data["reason"] == "checked"
    with TraceStore.for_project(find_project(root)) as store:
        pending = next(e for e in store.flow(signed) if e.status == "pending_review")
    reviewers = load_reviewers(root)
    finding, why = judge_review(
        review.data, flow_id=signed, decision=pending.data["decision"], reviewers=reviewers
    )
    assert finding == "ok", why
    assert reviewers["ana"].public_key == load_signing_key(keys / "ana.key").public_key
    assert _reviews(root, unsigned) == []


def test_two_distinct_reviewers_from_the_page_and_never_the_requester(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    require(root, "{roles: [support], count: 2, signed: true}")
    [flow] = pend(root, refund(amount=40))
    [own] = pend(root, refund(amount=50), requester="ana")
    with _client(root, keys) as ana:
        log_in(ana, "ana")
        assert "0 of 2 approvals (support)" in ana.get(f"/flows/{flow}").text
        first = _approve(ana, flow)
        assert first.status_code == 303 and first.headers["location"] == f"/flows/{flow}"
        page = ana.get(f"/flows/{flow}").text
        assert "your approval is recorded; it still waits" in page
        assert "1 of 2 approvals (support)" in page
        twice = _approve(ana, flow)
        assert twice.status_code == 400 and "already approved" in twice.text
        mine = _approve(ana, own)
        assert mine.status_code == 400 and "requested" in mine.text
    assert executed(root) == []
    with _client(root, keys) as bo:
        log_in(bo, "bo")
        assert _approve(bo, flow).status_code == 303
        assert f"{flow} approved: executed" in bo.get("/").text
    assert [e["params"]["amount"] for e in executed(root)] == [40]
    assert [e.data["by"] for e in _reviews(root, flow)] == ["ana", "bo"]
