"""One atomic writer and one lock loop: renames over a file and ``flock`` live in
``mir/storage`` only, so no store can forget the fsync or write its own wait loop again.

Read from the AST: ``os.replace`` / ``os.rename`` / ``shutil.move``, a ``.replace(x)``
or ``.rename(x)`` call with one positional argument (``Path.replace``; ``str.replace``
takes two, ``datetime.replace`` keywords), ``fcntl.flock`` / ``fcntl.lockf`` and any
``import fcntl``. A justified exception is listed below with its reason.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "mir"

# (file, what) -> why it is not an atomic content write through mir.storage
ALLOWED: dict[tuple[str, str], str] = {
    ("mir/traces/segments.py", "os.rename"): (
        "a new segment is created under a hidden name and locked, then renamed into "
        "place: publishing a live file its writer holds, so no compactor ever sees it "
        "unlocked (its content is appended line by line, never replaced)"
    ),
    ("mir/traces/compaction.py", ".rename()"): (
        "a corrupt segment is moved aside into quarantine whole, as found: a move, not a write"
    ),
}


def _findings(path: Path) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found += [("import fcntl", node.lineno) for a in node.names if a.name == "fcntl"]
        elif isinstance(node, ast.ImportFrom) and node.module in {"fcntl", "os", "shutil"}:
            names = {a.name for a in node.names}
            if node.module == "fcntl" or names & {"replace", "rename", "move"}:
                found.append((f"from {node.module} import", node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            module = owner.id if isinstance(owner, ast.Name) else None
            if (module, attr) in {("os", "replace"), ("os", "rename"), ("shutil", "move")}:
                found.append((f"{module}.{attr}", node.lineno))
            elif module == "fcntl" and attr in {"flock", "lockf"}:
                found.append((f"fcntl.{attr}", node.lineno))
            elif attr in {"replace", "rename"} and len(node.args) == 1 and not node.keywords:
                found.append((f".{attr}()", node.lineno))
    return found


@functools.cache  # one scan for both tests
def _tree() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("mir/storage/"):
            continue
        for what, line in _findings(path):
            found.setdefault((rel, what), []).append(line)
    return found


def test_renames_over_files_and_flock_live_in_mir_storage_only() -> None:
    found = _tree()
    unexplained = [
        f"{rel}:{lines[0]}: {what}"
        for (rel, what), lines in found.items()
        if (rel, what) not in ALLOWED
    ]
    assert not unexplained, (
        "write through mir.storage (write_atomic / atomic_file / file_lock), or list the "
        "exception in ALLOWED with its reason:\n" + "\n".join(unexplained)
    )


def test_every_allowed_exception_is_still_there() -> None:
    found = _tree()
    stale = [f"{rel}: {what}" for rel, what in ALLOWED if (rel, what) not in found]
    assert not stale, "no longer in the tree, drop from ALLOWED:\n" + "\n".join(stale)


def test_the_scan_sees_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import fcntl, os\n"
        "from pathlib import Path\n"
        "os.replace('a', 'b')\n"
        "Path('t.tmp').replace(Path('t'))\n"
        "fcntl.flock(3, fcntl.LOCK_EX)\n"
        "'text'.replace('a', 'b')\n"
        "moment.replace(tzinfo=None)\n"
    )
    assert _findings(sample) == [
        ("import fcntl", 1),
        ("os.replace", 3),
        (".replace()", 4),
        ("fcntl.flock", 5),
    ]
