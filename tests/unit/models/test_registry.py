"""The registry's rules, reading models.toml, and per-flow version selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.contracts import Route
from mir.errors import ConfigError
from mir.models import (
    ModelRef,
    RegistryError,
    RouteResolver,
    check_routes,
    in_canary,
    parse_registry,
)

SHA = "a" * 64
TOML = f"""\
# the registry
[[models]]
name = "triage"
version = "1"
stage = "production"
artifact = "models/triage-1.gguf"
sha256 = "{SHA}"
context = 4096

[[models]]  # the candidate
name = "triage"
version = "2"
stage = "canary"
share = 0.2
artifact = "models/triage-2.gguf"

[[models]]
name = "remote"
version = "1"
stage = "production"
provider = "litellm"
artifact = "openai/qwen"
api_base = "http://127.0.0.1:8080/v1"
"""


def registry(text: str = TOML):
    return parse_registry(text, Path("models.toml"))


def test_a_well_formed_registry_reads_in_file_order():
    reg = registry()
    assert [e.ref for e in reg.entries] == ["triage@1", "triage@2", "remote@1"]
    assert reg.names == ["triage", "remote"]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("[[models]\n", "malformed TOML", "1"),
        (
            TOML + '\n[[models]]\nname = "triage"\nversion = "1"\nartifact = "x.gguf"\n',
            "duplicate version triage@1",
            "25",
        ),
        (
            TOML.replace('stage = "canary"', 'stage = "production"').replace("share = 0.2\n", ""),
            "two production versions",
            "10",
        ),
        (TOML.replace("share = 0.2\n", ""), "needs a 'share'", "10"),
        # The line of the offending key, not its table's header.
        (TOML.replace("context = 4096", 'colour = "red"'), "unknown key 'colour'", "8"),
        (TOML.replace("context = 4096", "contxt = 4096"), "(did you mean 'context'?)", "8"),
        (TOML.replace('stage = "canary"', 'stage = "canery"'), "did you mean 'canary'?", "13"),
        # A key quoted inside a multi-line string is text, not the key at fault.
        (
            '[[models]]\nname = "a"\nversion = "1"\nartifact = "a.gguf"\n'
            'notes = """\nstage = "x"\n"""\nstage = "prod"\n',
            "stage",
            "8",
        ),
        (
            '[[models]]\nname = "Bad Name"\nversion = "1"\nartifact = "a.gguf"\n',
            "invalid model name",
            "2",
        ),
        ('[[models]]\nname = "a"\nversion = "1@2"\nartifact = "a.gguf"\n', "invalid version", "3"),
        ('[[models]]\nname = "a"\nversion = "1"\n', "missing 'artifact'", "1"),
        ('title = "x"\n', "unknown top-level key", None),
        ('[[models]]\nname = "a"\nversion = "1"\nartifact = "/etc/passwd"\n', ".gguf file", "1"),
        (
            '[[models]]\nname = "a"\nversion = "1"\nartifact = "package:pkg/weights.bin"\n',
            ".gguf file",
            "1",
        ),
    ],
)
def test_a_broken_registry_is_one_config_error_with_its_line(text, message, line):
    with pytest.raises(ConfigError) as caught:
        registry(text)
    assert message in str(caught.value)
    if line is not None:
        assert caught.value.where == f"models.toml:{line}"


def test_a_name_means_production_and_the_canary_takes_its_share():
    reg = registry()
    arms = [reg.select(ModelRef.parse("triage"), f"flow-{i}").arm for i in range(2000)]
    assert 400 - 80 <= arms.count("canary") <= 400 + 80
    assert set(arms) == {"production", "canary"}
    # deterministic per flow
    assert reg.select(ModelRef.parse("triage"), "flow-7") == reg.select(
        ModelRef.parse("triage"), "flow-7"
    )


def test_a_pinned_version_is_that_version_unless_retired():
    reg = registry()
    assert reg.select(ModelRef.parse("triage@2"), "f").arm == "pinned"
    retired = registry(
        TOML.replace('stage = "canary"', 'stage = "retired"').replace("share = 0.2\n", "")
    )
    with pytest.raises(RegistryError, match="retired"):
        retired.select(ModelRef.parse("triage@2"), "f")


def test_two_canaries_pick_independent_flows():
    flows = [f"flow-{i}" for i in range(4000)]
    a = {f for f in flows if in_canary(f, "a", 0.5)}
    b = {f for f in flows if in_canary(f, "b", 0.5)}
    assert 0.4 < len(a & b) / len(a) < 0.6


def test_the_resolver_turns_a_registry_route_into_the_entrys_route(tmp_path):
    (tmp_path / "models.toml").write_text(TOML)
    resolver = RouteResolver(tmp_path)
    route = Route(name="local", provider="llama", model="triage@1", max_tokens=64)
    resolved = resolver.resolve(route, "f")
    assert resolved.route.model == str(tmp_path / "models/triage-1.gguf")
    assert resolved.route.sha256 == SHA and resolved.route.n_ctx == 4096
    assert resolved.route.max_tokens == 64
    assert resolved.trace() == {
        "name": "triage",
        "version": "1",
        "stage": "production",
        "arm": "pinned",
    }
    assert resolver.resolve(route, "g").route is resolved.route  # cached per version
    remote = resolver.resolve(Route(provider="llama", model="remote"), "f").route
    assert (remote.provider, remote.model, remote.api_base) == (
        "litellm",
        "openai/qwen",
        "http://127.0.0.1:8080/v1",
    )
    plain = Route(provider="llama", model="default")
    assert resolver.resolve(plain, "f").route is plain


@pytest.mark.parametrize(
    ("model", "provider", "message"),
    [
        ("triage@9", "llama", "triage has no version '9'"),
        ("tirage", "llama", "unknown model 'tirage'"),
        ("tirage@1", "litellm", "unknown model 'tirage'"),
    ],
)
def test_a_route_naming_an_unknown_model_is_a_config_error(model, provider, message):
    with pytest.raises(ConfigError, match=message):
        check_routes([Route(provider=provider, model=model)], registry(), "c.yaml")


def test_plain_models_need_no_registry():
    routes = [
        Route(provider="llama", model="default"),
        Route(provider="llama", model="models/x.gguf"),
        Route(provider="litellm", model="openai/gpt-4o-mini"),
    ]
    check_routes(routes, None, "c.yaml")
    with pytest.raises(ConfigError, match=r"no models\.toml"):
        check_routes([Route(provider="llama", model="triage")], None, "c.yaml")


def test_a_header_quoted_inside_multi_line_notes_does_not_shift_the_error_line():
    text = (
        '[[models]]\nname = "a"\nversion = "1"\nartifact = "a.gguf"\n'
        'notes = """\n[[models]]\nold notes quoting a table\n"""\n\n'
        '[[models]]\nname = "a"\nversion = "1"\nartifact = "b.gguf"\n'
    )
    with pytest.raises(ConfigError) as caught:
        registry(text)
    assert "duplicate version a@1" in str(caught.value)
    assert caught.value.where == "models.toml:10"
