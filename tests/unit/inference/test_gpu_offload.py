"""GPU offload: a route's ``gpu_layers`` / ``threads`` reach llama.cpp, and unset GPU
layers mean all of them on a GPU build, none on a CPU one (a fake llama_cpp: no GPU here)."""

import importlib.machinery
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mir.contracts.domain import Route
from mir.inference import LlamaProvider, ModelSettings
from mir.inference.adapters import provider_for
from mir.inference.llama import LoadedModel, ModelCache
from mir.inference.model_cache import gpu_offload, load_model


class Recorded:
    """What ``llama_cpp.Llama`` was given."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        Recorded.calls.append(kwargs)
        self.metadata = {"tokenizer.chat_template": "{{ x }}"}
        self.chat_format = "chatml"

    def close(self) -> None:
        pass


def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch, *, gpu: bool) -> None:
    module = types.ModuleType("llama_cpp")
    module.__spec__ = importlib.machinery.ModuleSpec("llama_cpp", None)
    module.Llama = Recorded  # type: ignore[attr-defined]
    module.llama_supports_gpu_offload = lambda: gpu  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    Recorded.calls = []


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.mark.parametrize(("gpu", "expected"), [(True, -1), (False, 0)])
def test_unset_gpu_layers_follow_the_build(monkeypatch, gguf: Path, gpu: bool, expected: int):
    fake_llama_cpp(monkeypatch, gpu=gpu)
    assert gpu_offload() is gpu
    loaded = load_model(gguf, 512, 2, None)
    assert Recorded.calls[-1]["n_gpu_layers"] == expected
    assert loaded.gpu_layers == expected


@pytest.mark.parametrize("layers", [0, 7, -1])
def test_a_chosen_layer_count_is_passed_as_is(monkeypatch, gguf: Path, layers: int):
    fake_llama_cpp(monkeypatch, gpu=False)  # even where the build cannot: llama.cpp says so
    load_model(gguf, 512, 2, None, gpu_layers=layers)
    assert Recorded.calls[-1]["n_gpu_layers"] == layers
    assert Recorded.calls[-1]["n_threads"] == 2


def test_route_options_win_over_the_settings_and_reach_the_loader(gguf: Path):
    settings = ModelSettings(n_threads=4, gpu_layers=10)
    route = Route(provider="llama", model=str(gguf), threads=3, gpu_layers=20)
    provider = provider_for(route, settings=settings)
    assert isinstance(provider, LlamaProvider)
    assert (provider.n_threads, provider.gpu_layers) == (3, 20)
    # the route silent: the settings; the settings silent too: None (the build decides)
    plain = provider_for(Route(provider="llama", model=str(gguf)), settings=settings)
    assert (plain.n_threads, plain.gpu_layers) == (4, 10)  # type: ignore[union-attr]
    default = provider_for(Route(provider="llama", model=str(gguf)), settings=ModelSettings())
    assert default.gpu_layers is None  # type: ignore[union-attr]
    # zero is a choice (CPU only on a GPU build), not "unset"
    cpu = provider_for(Route(provider="llama", model=str(gguf), gpu_layers=0), settings=settings)
    assert cpu.gpu_layers == 0  # type: ignore[union-attr]

    seen: list[tuple[Any, ...]] = []

    def loader(path: Path, n_ctx: int, n_threads: int, chat_format: Any, **kw: Any):
        seen.append((n_threads, kw))
        return LoadedModel(object(), path, "chatml", load_ms=1.0)

    cache = ModelCache(loader=loader)
    LlamaProvider(str(gguf), n_threads=3, gpu_layers=20, cache=cache).loaded()
    LlamaProvider(str(gguf), n_threads=3, gpu_layers=0, cache=cache).loaded()
    LlamaProvider(str(gguf), n_threads=3, cache=cache).loaded()
    LlamaProvider(str(gguf), n_threads=3, gpu_layers=20, cache=cache).loaded()  # cached
    assert seen == [(3, {"gpu_layers": 20}), (3, {"gpu_layers": 0}), (3, {})]


def test_a_negative_layer_count_below_all_is_refused():
    with pytest.raises(ValueError, match="gpu_layers"):
        Route(provider="llama", model="default", gpu_layers=-2)
    with pytest.raises(ValueError, match="gpu_layers"):
        ModelSettings(gpu_layers=-5)
