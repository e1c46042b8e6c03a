"""The model cache's memory budget on real llama.cpp: three tiny GGUFs, room for two."""

from pathlib import Path

from mir.inference import LlamaProvider, Message, ModelRequest
from mir.inference.model_cache import ModelCache, size_mb
from tests.support.tiny_gguf import write_tiny_gguf


def models(tmp_path: Path, count: int) -> list[Path]:
    return [write_tiny_gguf(tmp_path / f"m{i}.gguf", seed=i) for i in range(count)]


def ask(provider: LlamaProvider) -> None:
    request = ModelRequest(messages=(Message(role="user", content="hi"),), max_tokens=4)
    provider.complete(request)


def test_loading_past_the_budget_unloads_the_least_recently_used_idle_model(
    tmp_path: Path,
) -> None:
    a, b, c = models(tmp_path, 3)
    cache = ModelCache(budget_mb=size_mb(a) * 2.5)  # room for two of the three
    providers = {p: LlamaProvider(str(p), n_ctx=256, n_threads=1, cache=cache) for p in (a, b, c)}
    ask(providers[a])
    ask(providers[b])
    ask(providers[a])  # a is now more recent than b
    assert (cache.loads, cache.unloads) == (2, 0)

    ask(providers[c])  # over budget: b (least recently used, idle) goes
    assert (cache.loads, cache.unloads) == (3, 1)
    assert cache.loaded_mb() <= cache.budget_mb

    ask(providers[a])  # still loaded: no load
    assert cache.loads == 3
    ask(providers[b])  # was unloaded: loads again, and c (now the oldest) goes
    assert (cache.loads, cache.unloads) == (4, 2)


def test_a_model_in_use_is_not_unloaded(tmp_path: Path) -> None:
    a, b = models(tmp_path, 2)
    cache = ModelCache(budget_mb=size_mb(a) * 1.5)  # room for one
    first = LlamaProvider(str(a), n_ctx=256, n_threads=1, cache=cache)
    busy = first.loaded()
    with busy.scheduler.slot():  # a call is running on a
        LlamaProvider(str(b), n_ctx=256, n_threads=1, cache=cache).loaded()
    assert (cache.loads, cache.unloads) == (2, 0)  # over budget for a while, no failure
    # Once a is idle, the next load makes room by unloading it (the least recent).
    third = write_tiny_gguf(tmp_path / "m2.gguf", seed=2)
    LlamaProvider(str(third), n_ctx=256, n_threads=1, cache=cache).loaded()
    assert cache.unloads == 2 and cache.loaded_mb() <= cache.budget_mb


def test_no_budget_keeps_every_model(tmp_path: Path) -> None:
    cache = ModelCache()
    for path in models(tmp_path, 3):
        LlamaProvider(str(path), n_ctx=256, n_threads=1, cache=cache).loaded()
    assert (cache.loads, cache.unloads) == (3, 0)
