"""Attacks on the review inbox: replayed and forged sessions, password guessing, huge
bodies, hostile paths, GETs that would act, and corrections the contract refuses.
Nothing of it may execute anything or show anything to someone not logged in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.inbox import PASSWORDS, csrf_of, executed, inbox_project, log_in, pend, refund

testclient = pytest.importorskip("starlette.testclient")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return inbox_project(tmp_path / "app")


def _client(root: Path):
    from mir.inbox import create_app

    return testclient.TestClient(create_app(root), follow_redirects=False)


def test_a_session_cookie_replayed_after_logout_is_no_session(project: Path) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        log_in(client)
        token = csrf_of(client.get("/").text)
        stolen = dict(client.cookies)
        assert client.post("/logout", data={"csrf": token}).status_code == 303
        client.cookies.clear()
        client.cookies.update(stolen)
        assert client.get("/").headers["location"] == "/login"
        answer = client.post(f"/flows/{flow}/approve", data={"csrf": token})
        assert answer.status_code == 403
    assert executed(project) == []


def test_a_forged_or_foreign_cookie_is_no_session(project: Path, tmp_path: Path) -> None:
    with _client(project) as client:
        log_in(client)
        cookie = client.cookies["mir_inbox"]
    for forged in (cookie[:-4] + "AAAA", "eyJyZXZpZXdlciI6ICJhbmEifQ==.x.y", ""):
        with _client(project) as other:
            other.cookies.set("mir_inbox", forged)
            assert other.get("/").headers["location"] == "/login"
    with _client(project) as restarted:  # a new server process: its own signing key
        restarted.cookies.set("mir_inbox", cookie)
        assert restarted.get("/").headers["location"] == "/login"


def test_logging_in_starts_a_new_session_and_token(project: Path) -> None:
    with _client(project) as client:
        before = csrf_of(client.get("/login").text)
        log_in(client)
        after = csrf_of(client.get("/").text)
        assert before != after
        assert client.post("/logout", data={"csrf": before}).status_code == 403


def test_password_guessing_is_braked_even_for_the_right_password(project: Path) -> None:
    with _client(project) as client:
        for _ in range(5):
            assert log_in(client, "ana", "guess").status_code == 401
        braked = log_in(client, "ana", PASSWORDS["ana"])
        assert braked.status_code == 429 and "too many failed logins" in braked.text
        assert log_in(client, "bo").status_code == 303  # another name is not braked


def test_a_huge_body_is_refused_before_anything_reads_it(project: Path) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        log_in(client)
        token = csrf_of(client.get("/").text)
        answer = client.post(f"/flows/{flow}/reject", data={"csrf": token, "reason": "x" * 200_000})
        assert answer.status_code == 413
        assert client.get(f"/flows/{flow}").status_code == 200  # still waiting


@pytest.mark.parametrize(
    "path",
    ["/flows/..%2f..%2fetc%2fpasswd", "/flows/%3Cscript%3E", "/flows/" + "a" * 200, "/flows/a1"],
)
def test_hostile_flow_paths_are_not_found_and_not_echoed(project: Path, path: str) -> None:
    pend(project, refund())
    with _client(project) as client:
        log_in(client)
        answer = client.get(path)
        assert answer.status_code == 404
        assert "<script>" not in answer.text and "passwd" not in answer.text


def test_a_prefix_never_stands_for_a_flow(project: Path) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        log_in(client)
        token = csrf_of(client.get("/").text)
        assert client.post(f"/flows/{flow[:8]}/approve", data={"csrf": token}).status_code == 404
        assert client.post(f"/flows/{flow}/pay", data={"csrf": token}).status_code == 404
        assert client.get(f"/flows/{flow}/approve").status_code == 405  # a GET never acts
    assert executed(project) == []


@pytest.mark.parametrize(
    ("fields", "status", "says"),
    [
        ({"set.amount": "10000"}, 400, "refused by the contract"),
        ({"set.amount": "-5"}, 400, "refused by the contract"),
        ({"set.amount": "abc"}, 400, "is not a number"),
        ({"set.iban": "DE00"}, 400, "no field &#39;iban&#39;"),
        ({"set.action": "deny"}, 400, "no field &#39;action&#39;"),
        ({"set.amount": "40"}, 400, "changes no field"),
    ],
)
def test_a_correction_the_contract_or_the_form_refuses_executes_nothing(
    project: Path, fields: dict, status: int, says: str
) -> None:
    [flow] = pend(project, refund(amount=40))
    with _client(project) as client:
        log_in(client)
        token = csrf_of(client.get(f"/flows/{flow}").text)
        form = {"csrf": token, "reason": "fix", **fields}
        answer = client.post(f"/flows/{flow}/correct", data=form)
        assert answer.status_code == status and says in answer.text, answer.text[-1500:]
        assert client.get(f"/flows/{flow}").status_code == 200  # still waiting
    assert executed(project) == []


def test_a_reject_or_correction_without_a_reason_is_refused(project: Path) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        log_in(client)
        token = csrf_of(client.get(f"/flows/{flow}").text)
        for verdict, extra in (("reject", {}), ("correct", {"set.amount": "30"})):
            form = {"csrf": token, "reason": "   ", **extra}
            answer = client.post(f"/flows/{flow}/{verdict}", data=form)
            assert answer.status_code == 400 and "the reason is part of the trace" in answer.text
    assert executed(project) == []


def test_hostile_reviewer_reasons_and_names_stay_text(project: Path) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        answer = log_in(client, "<b>x</b>", "y")
        assert answer.status_code == 401 and "<b>x</b>" not in answer.text
        log_in(client)
        token = csrf_of(client.get(f"/flows/{flow}").text)
        reason = "<script>alert(1)</script>"
        answer = client.post(f"/flows/{flow}/reject", data={"csrf": token, "reason": reason})
        assert answer.status_code == 303
        assert "<script>" not in client.get("/").text


def test_an_alerts_link_leads_back_to_its_flow_after_login_and_nowhere_else(
    project: Path,
) -> None:
    [flow] = pend(project, refund())
    with _client(project) as client:
        answer = client.get(f"/flows/{flow}")
        assert answer.headers["location"] == f"/login?next=/flows/{flow}"
        page = client.get(answer.headers["location"]).text
        assert f'name="next" value="/flows/{flow}"' in page
        for hostile in ("//evil.example/flows/x", "https://evil.example", "/logout", "/flows/../x"):
            form = {"csrf": csrf_of(page), "name": "ana", "password": PASSWORDS["ana"]}
            done = client.post("/login", data={**form, "next": hostile})
            assert done.headers["location"] == "/", hostile
            client.cookies.clear()
            page = client.get("/login").text
        form = {"csrf": csrf_of(page), "name": "ana", "password": PASSWORDS["ana"]}
        done = client.post("/login", data={**form, "next": f"/flows/{flow}"})
        assert done.headers["location"] == f"/flows/{flow}"
