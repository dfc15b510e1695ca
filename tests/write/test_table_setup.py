"""Creating a path table's layout file when another writer creates the same table at once."""
from __future__ import annotations

import pyarrow as pa
import pytest

from spark_hive_acid.acid.layout import LAYOUT_FILE, load_layout
from spark_hive_acid.exceptions import CommitConflictError
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.write.options import WriteOptions
from spark_hive_acid.write.table_setup import resolve_table

SCHEMA = pa.schema([("id", pa.int64())])


class _LosesTheRace(LocalFileSystem):
    """Another creator wins every ``create_exclusive``; ``gone``: its layout file is removed right
    after (the table dropped, or its layout being replaced: remove, then rename)."""

    def __init__(self, gone: bool):
        super().__init__()
        self.gone = gone

    def create_exclusive(self, path: str, data: bytes) -> bool:
        theirs = data.replace(b'"id"', b'"their_id"')
        assert super().create_exclusive(path, theirs)
        if self.gone:
            self.delete(path)
        return False


def test_a_concurrent_creator_s_layout_is_used(tmp_path):
    path = str(tmp_path / "t")
    layout, created = resolve_table(_LosesTheRace(gone=False), path, WriteOptions(path=path),
                                    SCHEMA, lambda insert_only: None)
    assert created and [n for n, _ in layout.columns] == ["their_id"]


def test_a_concurrent_creator_s_vanished_layout_is_a_conflict(tmp_path):
    """Found by mypy (issue 21): ``load_layout`` is None here, and was returned as the layout."""
    path = str(tmp_path / "t")
    with pytest.raises(CommitConflictError, match=LAYOUT_FILE):
        resolve_table(_LosesTheRace(gone=True), path, WriteOptions(path=path), SCHEMA,
                      lambda insert_only: None)
    assert load_layout(LocalFileSystem(), path) is None
