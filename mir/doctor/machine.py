"""The machine's checks: Python and mir, llama-cpp-python (its build, what
``gpu_layers`` does when unset, threads), the embedded model, chromium. Each is a
small function returning one ``Check``; ``llama_cpp`` is imported only here, guarded."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
import sys

from mir.doctor.domain import Check, ok, problem, warn

INSTALL_LOCAL = "pip install 'mir[local]'"
INSTALL_CHROMIUM = "apt-get install -y chromium"
FEATURES = ("AVX2", "AVX512", "NEON", "CUDA", "METAL", "VULKAN", "BLAS")


def python_check() -> Check:
    from mir import __version__

    found = f"Python {platform.python_version()} ({sys.executable}), mir {__version__}"
    return ok("python", found)


def llama_checks(n_threads: int | None, gpu_layers: int | None) -> list[Check]:
    """The build (version, features, GPU offload), what gpu_layers does, and threads."""
    if importlib.util.find_spec("llama_cpp") is None:
        return [
            warn(
                "llama-cpp-python",
                "not installed: the llama provider cannot run",
                f"run `{INSTALL_LOCAL}`",
            )
        ]
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
        text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
        offload = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception as exc:  # a broken native build must not stop the other checks
        return [
            problem(
                "llama-cpp-python",
                f"does not load: {type(exc).__name__}: {exc}",
                "reinstall it: `pip install --force-reinstall llama-cpp-python`",
            )
        ]
    version = importlib.metadata.version("llama-cpp-python")
    features = [f for f in FEATURES if f"{f} = 1" in text.upper()]
    build = f"{version}, {'GPU offload' if offload else 'CPU only'}"
    found = f"{build}; features: {', '.join(features) or 'none reported'}"
    return [
        ok("llama-cpp-python", found),
        _gpu_check(offload, gpu_layers),
        _threads_check(n_threads),
    ]


def _gpu_check(offload: bool, gpu_layers: int | None) -> Check:
    if gpu_layers is None:
        said = "every layer on the GPU" if offload else "no layer on a GPU (CPU-only build)"
        return ok("gpu_layers", f"unset: {said}")
    if gpu_layers != 0 and not offload:
        return warn(
            "gpu_layers",
            f"{gpu_layers} configured, but this build has no GPU offload",
            "install a GPU build of llama-cpp-python, or set gpu_layers = 0",
        )
    return ok("gpu_layers", f"{gpu_layers} configured ({'all' if gpu_layers == -1 else 'layers'})")


def _threads_check(n_threads: int | None) -> Check:
    from mir.inference import default_threads

    cpus = os.cpu_count() or 1
    threads = n_threads or default_threads()
    source = "configured" if n_threads else "default"
    found = f"{threads} thread(s) ({source}), {cpus} CPU(s) seen"
    if threads > cpus:
        return warn("threads", found, f"set [tool.mir.model] n_threads to at most {cpus}")
    return ok("threads", found)


def embedded_model_check() -> Check:
    from mir.errors import MirUserError
    from mir.inference import FILE_HASHER, embedded_model_path

    try:
        path = embedded_model_path()
    except MirUserError as exc:
        return warn("embedded model", exc.message, f"run `{INSTALL_LOCAL}`")
    digest = FILE_HASHER.digest(path)
    size = path.stat().st_size / 1e6
    return ok("embedded model", f"{path.name} ({size:.0f} MB), sha256 {digest[:12]}")


def chromium_check() -> Check:
    """Debian's chromium renders and checks the HTML reports (found on PATH)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        return problem(
            "chromium", "not found on PATH (HTML reports are checked in it)", INSTALL_CHROMIUM
        )
    return ok("chromium", found)
