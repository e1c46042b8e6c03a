import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mir.traces import TraceSettings
from mir.traces.redaction import (
    REDACTED,
    Redactor,
    is_secret_key,
    is_secret_name,
    secret_env_values,
)
from tests.support.secret_samples import CUSTOM_PATTERN, ENV_SECRETS, SAMPLES


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    """The redactor a project with the sample env and ``redact_patterns`` builds."""
    return Redactor(secret_env_values(ENV_SECRETS, []), patterns=[CUSTOM_PATTERN])


def test_literal_values_are_replaced_everywhere_in_nested_data():
    redactor = Redactor(["hunter2-value"])
    value = {"a": ["x hunter2-value y", {"hunter2-value": 1}], "n": 5}
    assert redactor.value(value) == {"a": [f"x {REDACTED} y", {REDACTED: 1}], "n": 5}


def test_secret_shapes_are_replaced_without_being_named():
    redactor = Redactor()
    text = "Authorization: Bearer abc.DEF-123_456 key sk-proj-ABCDEFGHIJKLMNOPQRST end"
    assert redactor.text(text) == f"Authorization: {REDACTED} key {REDACTED} end"
    assert redactor.text("AKIAABCDEFGHIJKLMNOP") == REDACTED


def test_sample_table_covers_at_least_17_shapes():
    assert len({shape for shape, _, _ in SAMPLES}) >= 17


@pytest.mark.parametrize(("shape", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_every_shape_is_redacted_in_text(redactor: Redactor, shape, text, secret):
    assert secret in text  # the sample holds what the test looks for
    redacted = redactor.text(text)
    assert secret not in redacted
    assert REDACTED in redacted
    assert redactor.text(redacted) == redacted  # idempotent: exports redact again


@pytest.mark.parametrize(("shape", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_every_shape_trips_the_cheap_precheck(redactor: Redactor, shape, text, secret):
    # The pre-check decides whether the regex runs at all: a shape it misses would be
    # written unredacted. It sees JSON text (a line), where the sample is escaped.
    line = json.dumps({"event_id": "e1", "prompt_tokens": 3, "data": {"x": f"see {text} here"}})
    assert redactor.might_contain(line)
    assert redactor.might_contain(json.dumps(line))  # data as JSON text inside the line


@pytest.mark.parametrize(("shape", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_every_shape_is_redacted_in_nested_values(redactor: Redactor, shape, text, secret):
    value = {"reason": text, "result": {"notes": [text], text: 1}}
    assert secret not in json.dumps(redactor.value(value))


def test_ordinary_trace_lines_do_not_trip_the_precheck():
    redactor = Redactor()
    line = (
        '{"event_id":"9f2c","flow_id":"f1","step":"infer","prompt_tokens":230,'
        '"completion_tokens":60,"data":{"decision":{"action":"refund","amount":12.5,'
        '"rationale":"order arrived damaged, within policy"},"key":"ab12","idempotency_key":"cd"}}'
    )
    assert not redactor.might_contain(line)


@pytest.mark.parametrize(
    "text",
    [
        "a basic understanding of refunds",
        "prompt_tokens: 230, tokens: 5",
        "bypass: true, compass: north",
        "idempotency_key: 4f2a9c",
        "https://shop.example.com/orders/A-1002",
        "password_hash: 5e884898da28",
        "the customer lost the keys to the bearer bond",
    ],
)
def test_ordinary_text_is_kept(text):
    assert Redactor().text(text) == text


def test_values_under_secret_keys_are_redacted_whatever_they_look_like():
    value = {
        "password": "x",
        "db": {"apiKey": 123456, "access_token": ["a", "b"], "enabled": True},
        "client_secret": {"id": "c1"},
        "idempotency_key": "4f2a9c",
        "prompt_tokens": 230,
    }
    assert Redactor().value(value) == {
        "password": REDACTED,
        "db": {"apiKey": REDACTED, "access_token": [REDACTED, REDACTED], "enabled": True},
        "client_secret": {"id": REDACTED},
        "idempotency_key": "4f2a9c",
        "prompt_tokens": 230,
    }


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("dbPassword", True),
        ("api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("refresh_token", True),
        ("credentials", True),
        ("idempotency_key", False),
        ("key", False),
        ("prompt_tokens", False),
        ("password_hash", False),
        ("keyboard", False),
    ],
)
def test_secret_key_names(key, secret):
    assert is_secret_key(key) is secret


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("AWS_SECRET_ACCESS_KEY", True),
        ("API_KEY", True),
        ("OPENAI_API_KEY", True),
        ("DB_PASS", True),
        ("GITHUB_TOKEN", True),
        ("MY_PASSWORD", True),
        ("GOOGLE_CREDENTIALS", True),
        ("BASIC_AUTH", True),
        ("KEYBOARD", False),
        ("PATH", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("PASSENGER_COUNT", False),
        ("HOME", False),
    ],
)
def test_env_names_are_split_into_words(name, secret):
    assert is_secret_name(name) is secret


def test_env_values_by_listed_name_and_by_secret_name():
    environ = {
        "MY_DB_URL": "postgres://u:pw@h/db",
        "OPENAI_API_KEY": "abcdef123456",
        "GITHUB_TOKEN": "tok-987654",
        "DB_PASS": "hunter22",
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.42",  # a path to a secret, not one
        "KEYBOARD": "qwertyuiop",
        "HOME": "/home/me",
        "EMPTY_TOKEN": "",
    }
    assert sorted(secret_env_values(environ, ["MY_DB_URL"])) == sorted(
        ["postgres://u:pw@h/db", "abcdef123456", "tok-987654", "hunter22"]
    )


def test_short_values_are_not_treated_as_secrets():
    redactor = Redactor(["dev", "1"])
    assert redactor.text("dev build 1") == "dev build 1"


def test_precheck_sees_secrets_escaped_inside_json_text():
    redactor = Redactor(['pa"ss\\word'])
    assert redactor.might_contain('{"k":"pa\\"ss\\\\word"}')
    assert not redactor.might_contain('{"k":"harmless"}')


def test_project_patterns_are_redacted_and_tripped_even_when_escaped():
    redactor = Redactor(patterns=[r"ACME-[0-9]{8}", r"ref\nline"])
    assert redactor.text("see ACME-12345678 now") == f"see {REDACTED} now"
    assert redactor.might_contain('{"x":"ACME-12345678"}')
    assert redactor.might_contain('{"x":"ref\\nline"}')  # matches only once decoded
    assert redactor.value({"x": "ref\nline"}) == {"x": REDACTED}
    assert not redactor.might_contain('{"x":"ACME-1234"}')


@pytest.mark.parametrize(
    ("patterns", "problem"),
    [(["ACME-[0-9"], "not a valid regex"), (["x*"], "matches the empty string")],
)
def test_bad_project_patterns_are_refused_at_load(patterns, problem):
    with pytest.raises(ValidationError, match=re.escape(problem)):
        TraceSettings.model_validate({"redact_patterns": patterns})


@pytest.mark.parametrize(
    "hostile",
    [
        "eyJ" * 70_000,  # a JWT start at every position of one base64url run
        "a." * 100_000 + "://",  # a URL scheme start at every word boundary
        "x://" * 50_000,
        'password:"' * 20_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 6_000,
        "basic " + "A" * 200_000,
        "bearer " * 30_000,
        "aPassword" * 20_000,
    ],
    ids=["jwt", "url", "url-scheme", "pair", "pem", "basic", "bearer", "camel"],
)
def test_hostile_text_is_redacted_in_linear_time(redactor: Redactor, hostile: str) -> None:
    # A model's output is hostile input: a pattern that backtracks quadratically would
    # hang the decision (200 KB of it took minutes with an unanchored JWT or URL shape).
    started = time.perf_counter()
    redactor.text(hostile)
    redactor.might_contain(hostile)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    "text", ["TOKENS: abc123", "tokens=abc123", "passwordHash: 5e8848", "Passwords2: x"]
)
def test_key_names_continued_by_letters_are_not_secrets(text):
    # The pre-check treats "tokens" as no secret: the pair shape must agree.
    redactor = Redactor()
    assert redactor.text(text) == text or redactor.might_contain(text)


_FRAGMENTS = [
    *("password", "Passwd", "PWD", "secret", "TOKEN", "tokens", "api", "_", "-", "key", "Key"),
    *("access", "credential", "Authorization", "bearer", "BaSiC", "sk", "rk", "_live_"),
    *("_test_", "AIza", "AKIA", "ASIA", "ghp_", "github_pat_", "xoxb-", "hf_", "eyJ", "."),
    *("://", "@", ":", "=", " ", '"', "'", "\\", "\n", "-----BEGIN ", "PRIVATE KEY-----"),
    *("-----END ", "dXNlcjpwYXNz", "Abc123xyz", "0123456789", "AB12CD34EF56GH78", "db"),
    *("eyJhbGciOiJIUzI1NiJ9.", "eyJzdWIiOiIxMjM0In0.", "SyB7x9Qm2Lp4Nc6Vd8Rf0Th3Jk5Wz1Ye7Ug"),
]
_TEXTS = st.lists(st.sampled_from(_FRAGMENTS), max_size=24).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=_TEXTS)
def test_the_precheck_never_misses_what_the_walk_would_redact(text: str) -> None:
    # Soundness of the fast path: whenever redaction would change a string or a key,
    # the pre-check on the JSON line holding it says "maybe".
    redactor = Redactor()
    value = {"data": {"x": text, text: 1}}
    if redactor.value(value) != value:
        assert redactor.might_contain(json.dumps(value))
        assert redactor.might_contain(json.dumps(json.dumps(value)))
    assert redactor.text(redactor.text(text)) == redactor.text(text)  # idempotent
