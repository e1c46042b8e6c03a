import pytest
from pydantic import ValidationError

from mir.inference import ModelSettings
from mir.inference.domain import is_loopback_url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://127.5.6.7/v1",
        "http://localhost:11434",
        "http://LOCALHOST:11434",
        "http://[::1]:8000/v1",
        "127.0.0.1:9000",
    ],
)
def test_loopback_urls(url: str) -> None:
    assert is_loopback_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "http://10.0.0.5:8000/v1",
        "http://192.168.1.2/v1",
        "http://localhost.evil.example/v1",
        "http://127.0.0.1.nip.io/v1",
        "http://0.0.0.0:8000",
        "",
    ],
)
def test_non_loopback_urls(url: str) -> None:
    assert not is_loopback_url(url)


def test_model_settings_defaults_to_the_embedded_model() -> None:
    settings = ModelSettings()
    assert (settings.provider, settings.model, settings.chat_format) == ("llama", "default", None)


def test_model_settings_rejects_unknown_keys() -> None:
    with pytest.raises(ValidationError, match="n_thread"):
        ModelSettings.model_validate({"n_thread": 4})
