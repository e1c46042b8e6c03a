"""Build llama.cpp's C++ ``llama-server`` once, for the serving bench (never for ``make test``).

The only network here is the package index, so the sources are the llama.cpp that
llama-cpp-python's sdist vendors (``vendor/llama.cpp``), at the version mir already runs
in-process: the bench then compares the same inference code in two serving shapes. The
binary and its build tree live in ``~/.cache/mir/llama-server-<version>/`` (outside the
repo; ``MIR_LLAMA_SERVER_CACHE`` overrides the folder) and are reused by later runs.

    python bench/llama_server.py      # builds if needed, prints the binary's path
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

VERSION = "0.3.36"  # llama-cpp-python, the version pinned for in-process inference
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    # portable: the binary may be reused on another CPU of the same machine kind
    "-DGGML_NATIVE=OFF",
    # no network at run time: models are files, never URLs
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    # one self-contained file: the build tree is deleted after the build
    "-DBUILD_SHARED_LIBS=OFF",
]


def cache_folder() -> Path:
    root = os.environ.get("MIR_LLAMA_SERVER_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "mir"
    return base / f"llama-server-{VERSION}"


def _sdist(folder: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    command += [f"llama-cpp-python=={VERSION}", "-d", str(folder), "-q"]
    subprocess.run(command, check=True)
    return next(folder.glob("llama_cpp_python-*.tar.gz"))


def _vendored_sources(sdist: Path, into: Path) -> Path:
    prefix = sdist.name.removesuffix(".tar.gz") + "/vendor/llama.cpp/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
        archive.extractall(into, members=members, filter="data")
    return into / prefix


def ensure_llama_server() -> Path:
    """The path of a built ``llama-server``; downloads and compiles it the first time
    (~minutes on 2 cores, under ``nice -n 19`` so other work keeps the CPU)."""
    folder = cache_folder()
    binary = folder / "bin" / "llama-server"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=folder) as work:
        sources = _vendored_sources(_sdist(Path(work)), Path(work))
        build = Path(work) / "build"
        nice = ["nice", "-n", "19"]
        subprocess.run(
            [*nice, "cmake", "-S", str(sources), "-B", str(build), "-G", "Ninja", *CMAKE_FLAGS],
            check=True,
        )
        subprocess.run(
            [*nice, "cmake", "--build", str(build), "--target", "llama-server", "-j2"],
            check=True,
        )
        binary.parent.mkdir(exist_ok=True)
        shutil.copy2(build / "bin" / "llama-server", binary)
    took = time.monotonic() - started
    (folder / "build-seconds.txt").write_text(f"{took:.0f}\n")
    print(f"built {binary} in {took:.0f} s", file=sys.stderr)
    return binary


if __name__ == "__main__":
    print(ensure_llama_server())
