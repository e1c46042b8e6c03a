"""The review inbox driven in-process with starlette's TestClient: login, CSRF, hostile
text, redaction, pagination, and reviews that change the ledger and traces as the CLI's
do."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.support.inbox import (
    csrf_of,
    executed,
    inbox_project,
    log_in,
    pend,
    refund,
)

testclient = pytest.importorskip("starlette.testclient")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return inbox_project(tmp_path / "app")


def client_for(root: Path, **options):
    from mir.inbox import create_app

    return testclient.TestClient(create_app(root, **options))


def test_nothing_is_shown_or_done_without_logging_in(project: Path) -> None:
    [flow] = pend(project, refund())
    with client_for(project) as client:
        assert client.get("/", follow_redirects=False).headers["location"] == "/login"
        assert client.get(f"/flows/{flow}", follow_redirects=False).status_code == 303
        token = csrf_of(client.get("/login").text)
        answer = client.post(f"/flows/{flow}/approve", data={"csrf": token})
        assert answer.status_code == 403
        wrong = log_in(client, "ana", "not-her-password")
        assert wrong.status_code == 401 and "wrong reviewer name or password" in wrong.text
        assert client.get("/", follow_redirects=False).status_code == 303
        unknown = log_in(client, "mallory", "anything")
        assert unknown.status_code == 401
    assert executed(project) == []


def test_a_post_without_the_right_csrf_token_is_refused_and_does_nothing(project: Path) -> None:
    [flow] = pend(project, refund())
    with client_for(project) as client:
        assert log_in(client).status_code == 303
        for form in ({}, {"csrf": "forged"}, {"csrf": ""}):
            answer = client.post(f"/flows/{flow}/approve", data={**form, "reason": "ok"})
            assert answer.status_code == 403, form
            assert "CSRF" in answer.text
        token = csrf_of(client.get("/").text)
        other_site = client.post(
            f"/flows/{flow}/approve", data={"csrf": token},
            headers={"Origin": "https://evil.example"},
        )  # fmt: skip
        assert other_site.status_code == 403
        assert client.get(f"/flows/{flow}").status_code == 200  # still waiting
    assert executed(project) == []


def test_the_login_form_needs_its_token_too(project: Path) -> None:
    with client_for(project) as client:
        client.get("/login")
        answer = client.post("/login", data={"name": "ana", "password": "ana-s3cret-pass"})
        assert answer.status_code == 403
        assert client.get("/", follow_redirects=False).status_code == 303


def test_hostile_text_is_shown_as_text_under_a_strict_policy(project: Path) -> None:
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    [flow] = pend(project, refund(reason=hostile[:80]))
    with client_for(project) as client:
        log_in(client)
        for path in ("/", f"/flows/{flow}"):
            page = client.get(path)
            assert "<script>" not in page.text and "<img src=x" not in page.text
            policy = page.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "script" not in policy
            assert page.headers["x-frame-options"] == "DENY"
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text


def test_secrets_are_redacted_as_the_traces_redact_them(project: Path, monkeypatch) -> None:
    from mir.inbox import create_app
    from mir.inbox.queue import ReviewQueue

    monkeypatch.setenv("SHOP_API_TOKEN", "tok-9f8e7d6c5b4a")
    [flow] = pend(project, refund(reason="key sk-abcdefghijklmnopqrstuv"))

    class Leaky(ReviewQueue):  # values that reached the queue by another path than traces
        def find(self, flow_id: str):
            real = super().find(flow_id)
            assert real is not None and "sk-abcdefghijklmnopqrstuv" not in str(real.decision)
            context = {"password": "hunter22hunter", "env": "tok-9f8e7d6c5b4a"}
            return dataclasses.replace(real, context=context, input={"note": "sk-" + "x" * 20})

    app = create_app(project, queue=Leaky(project))
    with testclient.TestClient(app) as client:
        log_in(client)
        page = client.get(f"/flows/{flow}").text
    for secret in ("sk-abcdefghijklmnopqrstuv", "hunter22hunter", "tok-9f8e7d6c5b4a", "x" * 20):
        assert secret not in page
    assert page.count("[REDACTED]") >= 4


def test_long_queues_are_paged(project: Path) -> None:
    flows = pend(project, *[refund(amount=i) for i in range(7)])
    with client_for(project) as client:
        log_in(client)
        first = client.get("/?size=3").text
        assert [f for f in flows if f in first] == flows[:3]
        assert "page 1 of 3" in first and 'rel="next"' in first and 'rel="prev"' not in first
        last = client.get("/?page=3&size=3").text
        assert [f for f in flows if f in last] == flows[6:] and 'rel="next"' not in last
        assert "page 1 of" in client.get("/?page=-4&size=3").text  # a hostile link: page 1
        beyond = client.get("/?page=99&size=3").text
        assert "No flows on this page" in beyond


def test_approve_and_reject_from_the_page_change_the_ledger_and_traces(project: Path) -> None:
    good, bad = pend(project, refund(amount=40), refund(amount=60))
    with client_for(project) as client:
        log_in(client)
        token = csrf_of(client.get(f"/flows/{good}").text)
        approved = client.post(f"/flows/{good}/approve", data={"csrf": token, "reason": "ok"})
        assert approved.status_code == 200 and f"{good} approved: executed" in approved.text
        rejected = client.post(f"/flows/{bad}/reject", data={"csrf": token, "reason": "too much"})
        assert f"{bad} rejected: rejected" in rejected.text
        no_reason = client.post(f"/flows/{good}/reject", data={"csrf": token})
        assert no_reason.status_code == 404  # decided: it no longer waits
        again = client.post(f"/flows/{bad}/approve", data={"csrf": token})
        assert again.status_code == 404
    assert [(e["action"], e["params"]["amount"]) for e in executed(project)] == [("refund", 40)]
    with TraceStore.for_project(find_project(project)) as store:
        for flow, verdict, status in ((good, "approve", "executed"), (bad, "reject", "rejected")):
            events = store.flow(flow)
            [review] = [e for e in events if e.step == "review"]
            assert review.data["by"] == "ana" and review.data["verdict"] == verdict
            assert events[-1].step == "final" and events[-1].status == status
