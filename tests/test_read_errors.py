"""Bad input gets a clear error of the project's own classes, naming the culprit.

On a Spark executor only the message survives, so every test pins what the message names:
the path, the file, the option or the column.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from acid_files import (
    ROW_SCHEMA, base_name, bp, bucket_name, delta_name, deletes, inserts, write_acid_file,
    write_flush_length, write_ids, write_metadata_acid, write_orc_file, write_text_file,
)
from spark_hive_acid.exceptions import (
    CorruptFileError, InvalidOptionError, InvalidSnapshotError, NotAnAcidTableError,
    NotEnoughHistoryError, SchemaMismatchError, TableNotFoundError, UnsupportedTypeError,
)
from spark_hive_acid.direct import read_table


def naming(*parts: str) -> str:
    """A ``match=`` pattern requiring every part (literally, in any order) in the message."""
    return "(?s)" + "".join(f"(?=.*{re.escape(str(p))})" for p in parts)


def read(path: Path, **options):
    return read_table(str(path), **options)


@pytest.fixture
def t(tmp_path: Path) -> Path:
    p = tmp_path / "t"
    p.mkdir()
    return p


def good_delta(t: Path, w: int = 1) -> Path:
    return write_acid_file(t / delta_name(w, w, 0) / bucket_name(0), ROW_SCHEMA,
                           inserts(w, bp(0), [(w, f"row{w}")]))


# --- paths ------------------------------------------------------------------------------------------
def test_missing_path(tmp_path):
    missing = tmp_path / "no_such_table"
    with pytest.raises(TableNotFoundError, match=naming(missing)):
        read(missing)


def test_path_is_a_file(tmp_path):
    f = write_text_file(tmp_path / "table.txt", "hello")
    with pytest.raises(TableNotFoundError, match=naming(f)):
        read(f)


def test_directory_with_only_a_text_file(t):
    write_text_file(t / "notes.txt", "this is not a table\n")
    with pytest.raises(NotAnAcidTableError, match=naming(t, "not a Hive ACID table")):
        read(t)


def test_empty_directory(t):
    with pytest.raises(NotAnAcidTableError, match=naming(t)):
        read(t)


# --- corrupt files ----------------------------------------------------------------------------------
def test_truncated_orc_file_in_newest_delta(t):
    good_delta(t, 1)
    bad = good_delta(t, 2)
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=naming(bad)):
        read(t, validWriteIds=write_ids(2))


def test_truncated_orc_file_in_older_delta(t):
    bad = good_delta(t, 1)
    good_delta(t, 2)
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) - 20])
    with pytest.raises(CorruptFileError, match=naming(bad)):
        read(t, validWriteIds=write_ids(2))


def test_garbage_bucket_file(t):
    good_delta(t, 2)
    bad = write_text_file(t / delta_name(1, 1, 0) / bucket_name(0), "definitely not ORC" * 10)
    with pytest.raises(CorruptFileError, match=naming(bad)):
        read(t, validWriteIds=write_ids(2))


def test_corrupt_delete_delta_file(t):
    good_delta(t, 1)
    bad = write_acid_file(t / delta_name(2, 2, 0, delete=True) / bucket_name(0), ROW_SCHEMA,
                          deletes(2, [(1, bp(0), 0)]))
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=naming(bad)):
        read(t, validWriteIds=write_ids(2))


def test_corrupt_original_file(t):
    bad = write_orc_file(t / "000000_0", rows=[(1, "a"), (2, "b")])
    write_orc_file(t / "000001_0", rows=[(3, "c")])
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=naming(bad)):
        read(t)


def test_flush_length_side_file_without_a_long(t):
    f = write_acid_file(t / delta_name(1, 2) / bucket_name(0), ROW_SCHEMA,
                        inserts(1, bp(0), [(1, "a")]))
    side = write_flush_length(f, [])
    side.write_bytes(b"\x00\x01\x02")
    with pytest.raises(CorruptFileError, match=naming(side)):
        read(t, validWriteIds=write_ids(2))


def test_flush_length_beyond_end_of_file(t):
    f = write_acid_file(t / delta_name(1, 2) / bucket_name(0), ROW_SCHEMA,
                        inserts(1, bp(0), [(1, "a")]))
    write_flush_length(f, [f.stat().st_size + 100])
    with pytest.raises(CorruptFileError, match=naming(f)):
        read(t, validWriteIds=write_ids(2))


@pytest.mark.parametrize("content", ["{not json", '{"thisFileVersion":"1","dataFormat":"compacted"}',
                                     '{"thisFileVersion":"0"}'])
def test_bad_metadata_acid_file(t, content):
    write_acid_file(t / base_name(1) / bucket_name(0), ROW_SCHEMA, inserts(1, bp(0), [(1, "a")]))
    meta = write_metadata_acid(t / base_name(1))
    meta.write_text(content)
    with pytest.raises(CorruptFileError, match=naming(meta)):
        read(t, validWriteIds=write_ids(1))


# --- options ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["db.t:abc:1::", "db.t:5", "db.t:5:9223372036854775807:x:",
                                 "db.t:5:9223372036854775807::1;2", "db.t:-3:1::"])
def test_malformed_valid_write_ids(t, bad):
    good_delta(t)
    with pytest.raises(InvalidSnapshotError, match=naming("validWriteIds", bad)):
        read(t, validWriteIds=bad)


@pytest.mark.parametrize("bad", ["abc", "10", "10:x::", "db.t:5:5::", "10:9223372036854775807:1,z:"])
def test_malformed_valid_txns(t, bad):
    good_delta(t)
    with pytest.raises(InvalidSnapshotError, match=naming("validTxns", bad)):
        read(t, validWriteIds=write_ids(1), validTxns=bad)


@pytest.mark.parametrize("option, value", [("includeRowId", "maybe"), ("splitSize", "abc"),
                                           ("splitSize", "0"),
                                           ("transactionalProperties", "bogus")])
def test_malformed_options(t, option, value):
    good_delta(t)
    with pytest.raises(InvalidOptionError, match=naming(option, value)):
        read(t, **{option: value})


def test_columns_option_names_unknown_column(t):
    good_delta(t)
    with pytest.raises(SchemaMismatchError, match=naming("columns", "nope")):
        read(t, columns="a,nope")


def test_columns_option_selects_and_orders(t):
    good_delta(t)
    got = read(t, columns="b,a")
    assert got.column_names == ["b", "a"]
    assert got.to_pylist() == [{"b": "row1", "a": 1}]


# --- history ----------------------------------------------------------------------------------------
def test_snapshot_older_than_compacted_base(t):
    write_acid_file(t / base_name(10) / bucket_name(0), ROW_SCHEMA, inserts(3, bp(0), [(3, "c")]))
    write_metadata_acid(t / base_name(10))
    with pytest.raises(NotEnoughHistoryError, match=naming("ACID_NOT_ENOUGH_HISTORY", base_name(10))):
        read(t, validWriteIds=write_ids(5))


# --- schemas ----------------------------------------------------------------------------------------
def test_irreconcilable_column_types(t):
    old = write_acid_file(t / delta_name(1, 1, 0) / bucket_name(0), "struct<amount:string,b:string>",
                          inserts(1, bp(0), [("not a number", "x")]))
    write_acid_file(t / delta_name(2, 2, 0) / bucket_name(0), "struct<amount:int,b:string>",
                    inserts(2, bp(0), [(7, "y")]))
    with pytest.raises(SchemaMismatchError, match=naming(old, "amount")):
        read(t, validWriteIds=write_ids(2))


UNION_ROW = "struct<a:int,choice:uniontype<int,string>>"


def test_uniontype_column_in_acid_file(t):
    write_acid_file(t / delta_name(1, 1, 0) / bucket_name(0), UNION_ROW,
                    inserts(1, bp(0), [(1, 5), (2, "five")]))
    with pytest.raises(UnsupportedTypeError, match=naming("choice")):
        read(t, validWriteIds=write_ids(1))


def test_uniontype_column_in_original_file(t):
    write_orc_file(t / "000000_0", UNION_ROW, rows=[(1, 5), (2, "five")])
    with pytest.raises(UnsupportedTypeError, match=naming("choice")):
        read(t)


def test_uniontype_column_can_be_left_out(t):
    """The UnsupportedTypeError advises option 'columns': reading the other columns works."""
    write_acid_file(t / delta_name(1, 1, 0) / bucket_name(0), UNION_ROW,
                    inserts(1, bp(0), [(1, 5), (2, "five")]))
    got = read(t, validWriteIds=write_ids(1), columns="a")
    assert sorted(r["a"] for r in got.to_pylist()) == [1, 2]
