"""ACID files whose key columns have the wrong type or nulls (issue 13, item 10).

The files carry the ACID field names, so they are read as ACID event files, but were not written
by Hive: pyarrow's ORC writer builds them here with string, double or null key columns. Hive
writes ``operation int, originalTransaction bigint, bucket int, rowId bigint, currentTransaction
bigint`` and never a null key. A string key used to fail deep inside numpy (``TypeError: '<' not
supported between instances of 'str' and 'int'``) and a null key was read as garbage; each must
be a ``CorruptFileError`` naming the file, on every path that reads keys: the in-memory delete set,
the streaming sort-merge, data files (deletes, ``includeRowId``, currentTransaction checks) and the
planner's look at a partition's first delete event.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pyarrow as pa
import pyarrow.orc as po
import pytest

from acid_files import bp, bucket_name, delta_name, write_ids, write_orc_file
from spark_hive_acid.exceptions import CorruptFileError
from spark_hive_acid.direct import read_table
from test_read_errors import naming

KEYS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction")
GOOD_TYPES = {"operation": pa.int32(), "originalTransaction": pa.int64(), "bucket": pa.int32(),
              "rowId": pa.int64(), "currentTransaction": pa.int64()}
ROW_TYPE = pa.struct([("a", pa.int32()), ("b", pa.string())])


def acid_file_pyarrow(path: Path, events: list[tuple], types: Optional[dict] = None) -> Path:
    """An ACID event file written with pyarrow's ORC writer; ``types`` overrides key column types
    (values are converted to the type's Python kind: str for strings, float for doubles)."""
    types = {**GOOD_TYPES, **(types or {})}
    cols = {}
    for i, name in enumerate(KEYS):
        t = types[name]
        conv = str if pa.types.is_string(t) else float if pa.types.is_floating(t) else (lambda v: v)
        cols[name] = pa.array([None if e[i] is None else conv(e[i]) for e in events], t)
    cols["row"] = pa.array([e[5] for e in events], ROW_TYPE)
    path.parent.mkdir(parents=True, exist_ok=True)
    po.write_table(pa.table(cols), str(path))
    return path


def insert_delta(t: Path, types: Optional[dict] = None, w: int = 1, null_row_id: bool = False) -> Path:
    events = [(0, w, bp(0), i, w, {"a": i, "b": f"r{i}"}) for i in range(3)]
    if null_row_id:
        events[1] = events[1][:3] + (None,) + events[1][4:]
    return acid_file_pyarrow(t / delta_name(w, w, 0) / bucket_name(0), events, types)


def delete_delta(t: Path, types: Optional[dict] = None, w: int = 2, null_key: Optional[str] = None,
                 deleted_row: int = 1) -> Path:
    """One real delete event plus one for a row that does not exist (two events: more than
    ``maxDeleteEventsInMemory=1``, so that option streams them)."""
    event = [2, 1, bp(0), deleted_row, w, None]
    if null_key:
        event[KEYS.index(null_key)] = None
    events = [tuple(event), (2, 1, bp(0), 50, w, None)]
    return acid_file_pyarrow(t / delta_name(w, w, 0, delete=True) / bucket_name(0), events, types)


@pytest.fixture
def t(tmp_path: Path) -> Path:
    return tmp_path / "t"


MEMORY_AND_STREAMING = pytest.mark.parametrize("opts", [{}, {"maxDeleteEventsInMemory": "1"}],
                                               ids=["in_memory", "streaming"])


@MEMORY_AND_STREAMING
def test_files_written_by_pyarrow_with_the_right_types_read(t, opts):
    """The builder's files are sound: with Hive's types the delete applies (one of three rows)."""
    insert_delta(t)
    delete_delta(t)
    got = read_table(str(t), validWriteIds=write_ids(2), **opts)
    assert sorted(got.column("a").to_pylist()) == [0, 2]


@MEMORY_AND_STREAMING
@pytest.mark.parametrize("bad", [
    {"originalTransaction": pa.string(), "bucket": pa.string(), "rowId": pa.string()},  # the issue
    {"rowId": pa.string()},
    {"bucket": pa.float64()},
    {"currentTransaction": pa.string()},
], ids=["keys_string", "rowId_string", "bucket_double", "currentTransaction_string"])
def test_delete_delta_with_wrong_key_types(t, opts, bad):
    insert_delta(t)
    damaged = delete_delta(t, bad)
    wrong = next(iter(bad))
    with pytest.raises(CorruptFileError, match=naming(damaged, wrong, "bigint")):
        read_table(str(t), validWriteIds=write_ids(2), **opts)


@MEMORY_AND_STREAMING
@pytest.mark.parametrize("key", ["originalTransaction", "bucket", "rowId", "currentTransaction"])
def test_delete_delta_with_a_null_key(t, opts, key):
    insert_delta(t)
    damaged = delete_delta(t, null_key=key)
    with pytest.raises(CorruptFileError, match=naming(damaged, key, "null")):
        read_table(str(t), validWriteIds=write_ids(2), **opts)


@pytest.mark.parametrize("opts", [{}, {"includeRowId": "true"}, {"with_deletes": True},
                                  {"validWriteIds": write_ids(3, aborted=[2])}],
                         ids=["plain", "row_id", "deletes", "current_txn_check"])
def test_data_file_with_string_key_columns(t, opts):
    opts = dict(opts)
    damaged = insert_delta(t, {"originalTransaction": pa.string(), "bucket": pa.string(),
                               "rowId": pa.string(), "currentTransaction": pa.string()})
    if opts.pop("with_deletes", False):
        delete_delta(t)
    with pytest.raises(CorruptFileError, match=naming(damaged, "originalTransaction", "bigint")):
        read_table(str(t), **opts)


@pytest.mark.parametrize("opts", [{"includeRowId": "true"}, {"with_deletes": True}],
                         ids=["row_id", "deletes"])
def test_data_file_with_a_null_row_id(t, opts):
    opts = dict(opts)
    damaged = insert_delta(t, null_row_id=True)
    if opts.pop("with_deletes", False):
        delete_delta(t, deleted_row=2)
    with pytest.raises(CorruptFileError, match=naming(damaged, "rowId", "null")):
        read_table(str(t), **opts)


def test_planner_first_delete_event_of_a_partition_with_originals(t):
    """With original files the planner reads a delete delta's first bucket value (Hive 2 or 3
    encoding?): a string bucket column is refused there too."""
    write_orc_file(t / "000000_0", "struct<a:int,b:string>", [(1, "x"), (2, "y")])
    damaged = delete_delta(t, {"bucket": pa.string()}, w=1)
    with pytest.raises(CorruptFileError, match=naming(damaged, "bucket", "bigint")):
        read_table(str(t))
