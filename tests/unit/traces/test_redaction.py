import pytest

from mir.traces.redaction import REDACTED, Redactor, secret_env_values


def test_literal_values_are_replaced_everywhere_in_nested_data():
    redactor = Redactor(["hunter2-secret"])
    value = {"a": ["x hunter2-secret y", {"hunter2-secret": 1}], "n": 5}
    assert redactor.value(value) == {"a": [f"x {REDACTED} y", {REDACTED: 1}], "n": 5}


def test_secret_shapes_are_replaced_without_being_named():
    redactor = Redactor()
    text = "Authorization: Bearer abc.DEF-123_456 key sk-proj-ABCDEFGHIJKLMNOPQRST end"
    assert redactor.text(text) == f"Authorization: {REDACTED} key {REDACTED} end"
    assert redactor.text("AKIAABCDEFGHIJKLMNOP") == REDACTED


def test_env_values_by_listed_name_and_by_secret_suffix():
    environ = {
        "MY_DB_URL": "postgres://u:pw@h/db",
        "OPENAI_API_KEY": "abcdef123456",
        "GITHUB_TOKEN": "tok-987654",
        "HOME": "/home/me",
        "EMPTY_TOKEN": "",
    }
    assert sorted(secret_env_values(environ, ["MY_DB_URL"])) == sorted(
        ["postgres://u:pw@h/db", "abcdef123456", "tok-987654"]
    )


def test_short_values_are_not_treated_as_secrets():
    redactor = Redactor(["dev", "1"])
    assert redactor.text("dev build 1") == "dev build 1"


def test_precheck_sees_secrets_escaped_inside_json_text():
    redactor = Redactor(['pa"ss\\word'])
    assert redactor.might_contain('{"k":"pa\\"ss\\\\word"}')
    assert not redactor.might_contain('{"k":"harmless"}')


@pytest.mark.parametrize(
    "secret",
    [
        "Bearer abcdefgh12345678",
        "bearer abcdefgh12345678",
        "BEARER abcdefgh12345678",
        "sk-ant-api03-ABCDEFGHIJKLMNOP",
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWX",
        "xoxb-1234567890-abcdef",
        "AKIAABCDEFGHIJKLMNOP",
    ],
)
def test_every_secret_shape_passes_the_cheap_precheck(secret):
    # The pre-check decides whether the regex runs at all: a shape it misses would be
    # written unredacted.
    redactor = Redactor()
    assert redactor.might_contain(f'{{"x":"see {secret} here"}}')
    assert redactor.text(f"see {secret} here") == f"see {REDACTED} here"
