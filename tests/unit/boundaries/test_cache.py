"""The on-disk parse cache: round trip, and invalidation when the linter changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.boundaries import cache as cache_module
from mir.boundaries.cache import FileParseCache
from mir.boundaries.parsing import Parsed

PARSED = Parsed((("json", (), 1, 0, False, False),), None, ("Name",))


def _fill(folder: Path) -> None:
    cache = FileParseCache(folder)
    cache.remember("a.py", (1, 2), "digest")
    cache.put("digest:a:0:1", PARSED)
    cache.store_result("run", [("MIR101", "a.py", 1, 0, "m", "r", None, None, None, None)])
    cache.save()


def test_round_trip(tmp_path: Path) -> None:
    _fill(tmp_path)
    again = FileParseCache(tmp_path)
    assert again.digest_for("a.py", (1, 2)) == "digest"
    assert again.digest_for("a.py", (1, 3)) is None  # stat changed: re-hash
    assert again.get("digest:a:0:1") == PARSED
    assert again.result("run") == [("MIR101", "a.py", 1, 0, "m", "r", None, None, None, None)]
    assert again.result("other run") is None


def test_a_changed_linter_invalidates_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(tmp_path)
    monkeypatch.setattr(cache_module, "_FINGERPRINT", ["a different linter"])
    again = FileParseCache(tmp_path)
    assert again.digest_for("a.py", (1, 2)) is None
    assert again.get("digest:a:0:1") is None
    assert again.result("run") is None


def test_entries_of_files_no_longer_used_are_dropped(tmp_path: Path) -> None:
    _fill(tmp_path)
    cache = FileParseCache(tmp_path)
    cache.remember("b.py", (5, 6), "other")
    cache.put("other:b:0:1", PARSED)
    cache.save()  # this "run" used only b.py
    again = FileParseCache(tmp_path)
    assert again.get("digest:a:0:1") is None and again.digest_for("a.py", (1, 2)) is None
    assert again.get("other:b:0:1") == PARSED


def test_an_unwritable_cache_folder_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    cache = FileParseCache(blocker / "cache")
    cache.remember("a.py", (1, 2), "digest")
    cache.save()  # nothing written, nothing raised
    assert not (blocker / "cache").exists()


def test_the_fingerprint_covers_the_code_findings_depend_on() -> None:
    """Rules, scanner, intent-doc format and settings: editing any of them (mir linting
    itself from an editable install) must not replay findings of the old code."""
    fingerprint = cache_module.linter_fingerprint()
    for source in ("boundaries/scan.py", "rules/__init__.py", "contracts/domain.py"):
        assert f"{source}:" in fingerprint
    assert "project/domain.py:" in fingerprint


def test_a_new_cache_folder_ignores_itself_in_git(tmp_path: Path) -> None:
    folder = tmp_path / ".mir" / "cache"
    cache = FileParseCache(folder)
    cache.remember("a.py", (1, 2), "digest")
    cache.save()
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
