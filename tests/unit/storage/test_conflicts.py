"""``is_lock_conflict``: one reading of DuckDB's "another process holds the file", shared
by the trace store, the eval history and the model history."""

from pathlib import Path

import duckdb
import pytest

from mir.errors import ConfigError
from mir.models.history import _explain
from mir.storage import is_lock_conflict


def test_a_lock_message_is_a_lock_conflict():
    message = (
        'IO Error: Could not set lock on file "/p/.mir/models.duckdb": Conflicting lock is '
        "held in python (PID 7)"
    )
    assert is_lock_conflict(duckdb.IOException(message))


@pytest.mark.parametrize("folder", ["locked", "blocks", "Lockers"])
def test_a_file_name_that_says_lock_is_not_a_lock_conflict(folder: str):
    message = (
        f'IO Error: The file "/home/{folder}/.mir/models.duckdb" exists, but it is not a '
        "valid DuckDB database file!"
    )
    assert not is_lock_conflict(duckdb.IOException(message))


def test_a_torn_model_history_under_a_locked_folder_says_unreadable_not_held(tmp_path: Path):
    path = tmp_path / "locked" / ".mir" / "models.duckdb"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(duckdb.Error) as caught:
        duckdb.connect(str(path))
    explained = _explain(path, caught.value)
    assert isinstance(explained, ConfigError)
    assert "not a readable model history" in str(explained)


def test_opening_is_retried_while_locked_then_the_conflict_is_raised():
    from mir.storage import retrying_while_locked

    calls = []

    def held() -> None:
        calls.append(1)
        raise duckdb.IOException('Could not set lock on file "/p/x.duckdb": Conflicting lock')

    with pytest.raises(duckdb.IOException):
        retrying_while_locked(held, 0.2)
    assert len(calls) > 1  # tried again until the deadline

    def torn() -> None:
        calls.append(2)
        raise duckdb.IOException("not a valid DuckDB database file")

    with pytest.raises(duckdb.IOException, match="not a valid"):
        retrying_while_locked(torn, 5)
    assert calls.count(2) == 1  # any other error: at once
