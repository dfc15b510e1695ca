"""Tests of the Hive 2.3 reference harness itself (tests/hive_ref).

Every expected value here is written by hand from the ACID format (notes/hive-acid-format.md and
notes/hive-2.3-inside-pyspark.md), never computed by the harness, so these tests show that the
harness drives Hive the way we think it does.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.orc as po
import pytest

from hive_ref import HiveReferenceError, MAX_TXN, parse_hive_type, valid_txns
from hive_ref.fixtures import hive_ref  # noqa: F401  (also provided by conftest.py)

AB = [("a", "int"), ("b", "string")]


def listing(root) -> list:
    """Visible entries of a table dir (Hive ignores names starting with '.' or '_' except
    _orc_acid_version; we show that one too)."""
    return sorted(n for n in os.listdir(root) if not n.startswith("."))


def events(path) -> list:
    return po.ORCFile(str(path)).read().to_pylist()


def footer(path) -> dict:
    return {k.decode(): v.decode() for k, v in po.ORCFile(str(path)).metadata.items()}


def ev(op, otxn, bucket, rowid, ctxn, row):
    return {
        "operation": op,
        "originalTransaction": otxn,
        "bucket": bucket,
        "rowId": rowid,
        "currentTransaction": ctxn,
        "row": row,
    }


# ------------------------------------------------------------------------------------------
# No JVM needed
# ------------------------------------------------------------------------------------------


def test_valid_txns_format():
    assert valid_txns(10) == "10:9223372036854775807"
    assert valid_txns(5, [3, 2, 3]) == "5:9223372036854775807:2:3"
    assert valid_txns(5, [4], min_open=4) == "5:4:4"
    assert MAX_TXN == 2**63 - 1


def test_parse_hive_type():
    assert parse_hive_type("int") == ("prim", "int")
    assert parse_hive_type("DECIMAL(10, 2)") == ("decimal", 10, 2)
    assert parse_hive_type("decimal") == ("decimal", 10, 0)
    assert parse_hive_type("varchar(5)") == ("prim", "varchar")
    assert parse_hive_type("map<string,array<struct<x:int,y:decimal(5,1)>>>") == (
        "map",
        ("prim", "string"),
        ("array", ("struct", (("x", ("prim", "int")), ("y", ("decimal", 5, 1))))),
    )
    with pytest.raises(ValueError):
        parse_hive_type("array<int")


# ------------------------------------------------------------------------------------------
# Hive's writer and reader
# ------------------------------------------------------------------------------------------


@pytest.mark.hive
def test_insert_then_delete(hive_ref, tmp_path):
    t = tmp_path / "t"
    new = hive_ref.write(t, AB, txn=1, statement=0, inserts=[[1, "a"], [2, "b"], [3, "c"]])
    assert new == ["_orc_acid_version", "delta_0000001_0000001_0000/bucket_00000"]
    new = hive_ref.write(t, AB, txn=2, statement=0, deletes=[(1, 0, 1)])
    # A delete-only transaction creates no delta_ directory.
    assert new == ["delete_delta_0000002_0000002_0000/bucket_00000"]
    assert listing(t) == [
        "_orc_acid_version",
        "delete_delta_0000002_0000002_0000",
        "delta_0000001_0000001_0000",
    ]
    # Hadoop's checksummed local file system leaves .crc files beside each file.
    assert os.path.exists(t / "delta_0000001_0000001_0000" / ".bucket_00000.crc")
    # Hive 2.3 writes the version file at the table root (4 bytes: int 0), none in the deltas.
    assert (t / "_orc_acid_version").read_bytes() == b"\x00\x00\x00\x00"
    assert not os.path.exists(t / "delta_0000001_0000001_0000" / "_orc_acid_version")

    insert_file = t / "delta_0000001_0000001_0000" / "bucket_00000"
    delete_file = t / "delete_delta_0000002_0000002_0000" / "bucket_00000"
    assert events(insert_file) == [
        ev(0, 1, 0, 0, 1, {"a": 1, "b": "a"}),
        ev(0, 1, 0, 1, 1, {"a": 2, "b": "b"}),
        ev(0, 1, 0, 2, 1, {"a": 3, "b": "c"}),
    ]
    assert events(delete_file) == [ev(2, 1, 0, 1, 2, None)]
    # The delete file carries the full event schema, row struct included.
    assert str(po.ORCFile(str(delete_file)).schema.field("row").type) == "struct<a: int32, b: string>"
    assert po.ORCFile(str(insert_file)).compression == "ZLIB"
    assert footer(insert_file) == {"hive.acid.key.index": "", "hive.acid.stats": "3,0,0"}
    assert footer(delete_file) == {"hive.acid.key.index": "", "hive.acid.stats": "0,0,1"}

    # Hive's reader: txn 2 committed -> the deleted row is gone.
    assert hive_ref.read(t, AB, valid_txns="2:9223372036854775807", sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 2), (3, "c")),
    ]
    # txn 2 invalid (open/aborted) -> its delete does not apply.
    assert hive_ref.read(t, AB, valid_txns="2:9223372036854775807:2", sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 1), (2, "b")),
        ((1, 0, 2), (3, "c")),
    ]
    # Snapshot taken before txn 2 (HWM 1).
    assert hive_ref.read(t, AB, valid_txns="1:9223372036854775807", sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 1), (2, "b")),
        ((1, 0, 2), (3, "c")),
    ]
    # Nothing committed yet.
    assert hive_ref.read(t, AB, valid_txns="2:1:1:2") == []

    assert hive_ref.acid_state(t, "2:9223372036854775807") == {
        "base": None,
        "deltas": [
            {"path": "delta_0000001_0000001_0000", "min_txn": 1, "max_txn": 1,
             "statement": 0, "delete": False},
            {"path": "delete_delta_0000002_0000002_0000", "min_txn": 2, "max_txn": 2,
             "statement": 0, "delete": True},
        ],
        "original_files": [],
        "obsolete": [],
    }


@pytest.mark.hive
def test_update_is_delete_plus_insert(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, inserts=[[1, "a"], [2, "b"], [3, "c"]])
    # One statement updating row 2 and deleting row 1; the harness sorts them by ROW__ID.
    new = hive_ref.write(
        t, AB, txn=2, updates=[((1, 0, 1), [2, "B"])], deletes=[(1, 0, 0)]
    )
    assert new == [
        "delete_delta_0000002_0000002_0000/bucket_00000",
        "delta_0000002_0000002_0000/bucket_00000",
    ]
    assert events(t / "delete_delta_0000002_0000002_0000" / "bucket_00000") == [
        ev(2, 1, 0, 0, 2, None),
        ev(2, 1, 0, 1, 2, None),
    ]
    # The new version of the row gets a new ROW__ID: (txn 2, bucket 0, row 0).
    assert events(t / "delta_0000002_0000002_0000" / "bucket_00000") == [
        ev(0, 2, 0, 0, 2, {"a": 2, "b": "B"}),
    ]
    # Hive 2.3 quirk: both files of an update share one stats string, and the key index is
    # filled only in the delete file.
    assert footer(t / "delta_0000002_0000002_0000" / "bucket_00000") == {
        "hive.acid.key.index": "", "hive.acid.stats": "0,0,2"}
    assert footer(t / "delete_delta_0000002_0000002_0000" / "bucket_00000") == {
        "hive.acid.key.index": "1,0,1;", "hive.acid.stats": "0,0,2"}

    assert hive_ref.read(t, AB, valid_txns=valid_txns(2), sort=True) == [
        ((1, 0, 2), (3, "c")),
        ((2, 0, 0), (2, "B")),
    ]
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2, [2]), sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 1), (2, "b")),
        ((1, 0, 2), (3, "c")),
    ]


@pytest.mark.hive
def test_multi_statement_transaction(hive_ref, tmp_path):
    t = tmp_path / "t"
    assert hive_ref.write(t, AB, txn=3, statement=0, inserts=[[1, "a"], [2, "b"]]) == [
        "_orc_acid_version", "delta_0000003_0000003_0000/bucket_00000"]
    assert hive_ref.write(t, AB, txn=3, statement=1, deletes=[(3, 0, 0)]) == [
        "delete_delta_0000003_0000003_0001/bucket_00000"]
    # A later statement of the same txn continues the row ids after the earlier statements'
    # insert files of that bucket (Hive 2.3's RecordUpdater looks them up), so ROW__IDs stay unique.
    assert hive_ref.write(t, AB, txn=3, statement=2, inserts=[[5, "e"], [6, "f"]]) == [
        "delta_0000003_0000003_0002/bucket_00000"]
    assert events(t / "delta_0000003_0000003_0002" / "bucket_00000") == [
        ev(0, 3, 0, 2, 3, {"a": 5, "b": "e"}),
        ev(0, 3, 0, 3, 3, {"a": 6, "b": "f"}),
    ]
    # Statement 1's delete hides statement 0's row only.
    assert hive_ref.read(t, AB, valid_txns=valid_txns(3), sort=True) == [
        ((3, 0, 1), (2, "b")),
        ((3, 0, 2), (5, "e")),
        ((3, 0, 3), (6, "f")),
    ]
    assert [d["path"] for d in hive_ref.acid_state(t, valid_txns(3))["deltas"]] == [
        "delta_0000003_0000003_0000",
        "delete_delta_0000003_0000003_0001",
        "delta_0000003_0000003_0002",
    ]
    # A directory without statement id.
    assert hive_ref.write(tmp_path / "u", AB, txn=7, statement=None, inserts=[[1, "a"]]) == [
        "_orc_acid_version", "delta_0000007_0000007/bucket_00000"]


@pytest.mark.hive
def test_insert_overwrite_base(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, inserts=[[1, "a"], [2, "b"]])
    new = hive_ref.write(t, AB, txn=2, base=True, inserts=[[10, "x"], [20, None]])
    assert new == ["base_0000002/bucket_00000"]
    assert events(t / "base_0000002" / "bucket_00000") == [
        ev(0, 2, 0, 0, 2, {"a": 10, "b": "x"}),
        ev(0, 2, 0, 1, 2, {"a": 20, "b": None}),
    ]
    hive_ref.write(t, AB, txn=3, deletes=[(2, 0, 0)])
    assert hive_ref.read(t, AB, valid_txns=valid_txns(3)) == [((2, 0, 1), (20, None))]
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2), sort=True) == [
        ((2, 0, 0), (10, "x")),
        ((2, 0, 1), (20, None)),
    ]
    state = hive_ref.acid_state(t, valid_txns(3))
    assert state["base"] == "base_0000002"
    assert [d["path"] for d in state["deltas"]] == ["delete_delta_0000003_0000003_0000"]
    assert state["obsolete"] == ["delta_0000001_0000001_0000"]
    # A snapshot older than the only base: Hive 2.3 refuses, even for an insert-overwrite base.
    with pytest.raises(HiveReferenceError, match="Not enough history"):
        hive_ref.read(t, AB, valid_txns=valid_txns(1))
    # Base validity ignores the exception list: base_2 is still chosen when txn 2 is invalid,
    # and its rows are then dropped one by one (their currentTransaction is invalid).
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2, [2])) == []
    # A base at or above minOpenTxn is not usable either.
    with pytest.raises(HiveReferenceError, match="Not enough history"):
        hive_ref.read(t, AB, valid_txns=valid_txns(3, [2], min_open=2))
    # The RecordUpdater writes nothing for an empty insert overwrite (no base dir at all).
    assert hive_ref.write(tmp_path / "empty", AB, txn=1, base=True) == ["_orc_acid_version"]
    assert listing(tmp_path / "empty") == ["_orc_acid_version"]
    with pytest.raises(ValueError):
        hive_ref.write(t, AB, txn=4, base=True, deletes=[(2, 0, 1)])


@pytest.mark.hive
def test_several_buckets(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, bucket=0, inserts=[[1, "a"], [2, "b"]], bucket_count=2)
    new = hive_ref.write(t, AB, txn=1, bucket=1, inserts=[[3, "c"], [4, "d"]], bucket_count=2)
    assert new == ["delta_0000001_0000001_0000/bucket_00001"]
    # Bucket 1's events carry the plain bucket number (BucketCodec V0), row ids from 0.
    assert events(t / "delta_0000001_0000001_0000" / "bucket_00001") == [
        ev(0, 1, 1, 0, 1, {"a": 3, "b": "c"}),
        ev(0, 1, 1, 1, 1, {"a": 4, "b": "d"}),
    ]
    assert hive_ref.write(t, AB, txn=2, bucket=1, deletes=[(1, 1, 0)], bucket_count=2) == [
        "delete_delta_0000002_0000002_0000/bucket_00001"]
    assert events(t / "delete_delta_0000002_0000002_0000" / "bucket_00001") == [
        ev(2, 1, 1, 0, 2, None)]
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2), bucket_count=2, sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 1), (2, "b")),
        ((1, 1, 1), (4, "d")),
    ]
    # Hive routes an update/delete to the bucket of its ROW__ID; the harness refuses a mismatch.
    with pytest.raises(ValueError, match="bucket"):
        hive_ref.write(t, AB, txn=3, bucket=0, deletes=[(1, 1, 1)])


TYPES = [
    ("i", "int"),
    ("ti", "tinyint"),
    ("si", "smallint"),
    ("l", "bigint"),
    ("f", "float"),
    ("d", "double"),
    ("dec", "decimal(10,2)"),
    ("big", "decimal(38,18)"),
    ("s", "string"),
    ("vc", "varchar(5)"),
    ("ch", "char(4)"),
    ("dt", "date"),
    ("ts", "timestamp"),
    ("bo", "boolean"),
    ("bin", "binary"),
    ("arr", "array<int>"),
    ("m", "map<string,int>"),
    ("st", "struct<x:int,y:string>"),
]


@pytest.mark.hive
def test_types_round_trip(hive_ref, tmp_path):
    t = tmp_path / "t"
    rows = [
        [1, 2, 3, 2**62, 1.5, 2.25, decimal.Decimal("12.5"),
         "-12345678901234567890.123456789012345678", "héllo ✓ 𝄞", "abcdefg", "ab",
         dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 123456), True, b"\x00\xff",
         [1, None, 3], {"k": 1, "z": None}, {"x": 1, "y": "w"}],
        [None] * len(TYPES),
        [-2**31, -128, -32768, -2**63, 0.1, float("-inf"), "-0.01", "0", "", "", "",
         "1970-01-01", "1960-06-01 12:00:00.1", False, b"", [], {}, (None, None)],
        [0, 0, 0, 0, float("nan"), 0.0, "99999999.99", "1e-18", "x", "é", "éé",
         "2038-01-19", "2000-01-01 00:00:00.000000001", True, b"a", [7], {"": 0}, (2, None)],
    ]
    hive_ref.write(t, TYPES, txn=1, inserts=rows)

    got = hive_ref.read(t, TYPES, valid_txns=valid_txns(1), sort=True)
    assert [rid for rid, _ in got] == [(1, 0, 0), (1, 0, 1), (1, 0, 2), (1, 0, 3)]
    r0, r1, r2, r3 = (row for _, row in got)
    assert r0 == (
        1, 2, 3, 4611686018427387904, 1.5, 2.25, "12.50",
        "-12345678901234567890.123456789012345678", "héllo ✓ 𝄞",
        "abcde",  # varchar(5) truncates
        "ab  ",  # char(4) is padded
        "2024-02-29", "2024-01-02 03:04:05.123456", True, b"\x00\xff",
        [1, None, 3], {"k": 1, "z": None}, (1, "w"),
    )
    assert r1 == (None,) * len(TYPES)
    assert r2 == (
        -2147483648, -128, -32768, -9223372036854775808,
        0.10000000149011612,  # float32(0.1), widened exactly
        float("-inf"), "-0.01", "0.000000000000000000", "", "", "    ",
        "1970-01-01", "1960-06-01 12:00:00.1", False, b"", [], {}, (None, None),
    )
    assert r3[4] != r3[4]  # NaN
    assert r3[:4] == (0, 0, 0, 0)
    assert r3[5:] == (
        0.0, "99999999.99", "0.000000000000000001", "x", "é", "éé  ",
        "2038-01-19", "2000-01-01 00:00:00.000000001", True, b"a", [7], {"": 0}, (2, None),
    )

    native = hive_ref.read(t, TYPES, valid_txns=valid_txns(1), sort=True, native=True)
    n0 = native[0][1]
    assert n0[6] == decimal.Decimal("12.50")
    assert n0[11] == dt.date(2024, 2, 29)
    assert n0[12] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456)

    # What is physically in the file, read independently with pyarrow.
    table = po.ORCFile(str(t / "delta_0000001_0000001_0000" / "bucket_00000")).read()
    row = table.column("row").combine_chunks()
    fields = {row.type.field(k).name: row.field(k) for k in range(row.type.num_fields)}
    assert fields["dec"].type == pa.decimal128(10, 2)
    assert fields["dec"].to_pylist() == [
        decimal.Decimal("12.50"), None, decimal.Decimal("-0.01"), decimal.Decimal("99999999.99")]
    assert fields["s"].to_pylist() == ["héllo ✓ 𝄞", None, "", "x"]
    assert fields["ch"].to_pylist() == ["ab  ", None, "    ", "éé  "]
    # Dates are days since 1970-01-01; 2024-02-29 is day 19782, 2038-01-19 is day 24855.
    assert fields["dt"].cast(pa.int32()).to_pylist() == [19782, None, 0, 24855]
    # Timestamps (JVM in UTC): 2024-01-02 03:04:05.123456 = 1704164645.123456 s.
    assert fields["ts"].cast(pa.int64()).to_pylist() == [
        1704164645123456000, None, -302443199900000000, 946684800000000001]
    assert fields["f"].type == pa.float32()
    assert fields["m"].to_pylist()[0] == [("k", 1), ("z", None)]


@pytest.mark.hive
def test_bad_values_are_rejected(hive_ref, tmp_path):
    with pytest.raises(HiveReferenceError, match="does not fit decimal"):
        hive_ref.write(tmp_path / "t", [("d", "decimal(4,2)")], txn=1, inserts=[["123.45"]])
    with pytest.raises(HiveReferenceError, match="out of range"):
        hive_ref.write(tmp_path / "t", [("i", "int")], txn=1, inserts=[[2**31]])
    with pytest.raises(ValueError):
        hive_ref.write(tmp_path / "t", AB, txn=1, inserts=[[1]])


@pytest.mark.hive
def test_compacted_base_keeps_row_ids(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, inserts=[[1, "a"], [2, "b"], [3, "c"]])
    hive_ref.write(t, AB, txn=2, deletes=[(1, 0, 1)])
    # What a major compaction at HWM 2 leaves: the two live rows, original ROW__IDs kept.
    path = hive_ref.write_compacted_base(
        t, AB, txn=2, bucket=0, rows=[((1, 0, 2), [3, "c"]), ((1, 0, 0), [1, "a"])]
    )
    assert path == str(t / "base_0000002" / "bucket_00000")
    assert events(path) == [
        ev(0, 1, 0, 0, 1, {"a": 1, "b": "a"}),
        ev(0, 1, 0, 2, 1, {"a": 3, "b": "c"}),
    ]
    assert po.ORCFile(path).compression == "ZLIB"
    assert footer(path)["hive.acid.stats"] == "2,0,0"
    # A later delete addresses the row by its original ROW__ID.
    hive_ref.write(t, AB, txn=3, deletes=[(1, 0, 2)])
    assert hive_ref.read(t, AB, valid_txns=valid_txns(3)) == [((1, 0, 0), (1, "a"))]
    state = hive_ref.acid_state(t, valid_txns(3))
    assert state["base"] == "base_0000002"
    assert state["obsolete"] == ["delta_0000001_0000001_0000", "delete_delta_0000002_0000002_0000"]
    with pytest.raises(HiveReferenceError, match="Not enough history"):
        hive_ref.read(t, AB, valid_txns=valid_txns(1))


@pytest.mark.hive
def test_minor_compaction_style_deltas(hive_ref, tmp_path):
    t = tmp_path / "t"
    ins = hive_ref.write_raw(
        t, AB, kind="delta", bucket=0, min_txn=1, max_txn=2,
        events=[(0, 1, 0, 0, 1, [1, "a"]), (0, 1, 0, 1, 1, [2, "b"]), (0, 2, 0, 0, 2, [3, "c"])],
    )
    dels = hive_ref.write_raw(
        t, AB, kind="delete_delta", bucket=0, min_txn=1, max_txn=2,
        events=[(2, 1, 0, 0, 2, None)],
    )
    assert ins == str(t / "delta_0000001_0000002" / "bucket_00000")
    assert dels == str(t / "delete_delta_0000001_0000002" / "bucket_00000")
    # Hive 2.3's raw writer leaves non-base files uncompressed.
    assert po.ORCFile(ins).compression == "UNCOMPRESSED"
    assert events(dels) == [ev(2, 1, 0, 0, 2, None)]
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2), sort=True) == [
        ((1, 0, 1), (2, "b")),
        ((2, 0, 0), (3, "c")),
    ]
    # Txn 2 invalid: its insert event and its delete event are both filtered row by row.
    assert hive_ref.read(t, AB, valid_txns=valid_txns(2, [2]), sort=True) == [
        ((1, 0, 0), (1, "a")),
        ((1, 0, 1), (2, "b")),
    ]


@pytest.mark.hive
def test_original_files(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write_original(t / "000000_0", AB, [[1, "o1"], [2, "o2"]])
    hive_ref.write_original(t / "000001_0", AB, [[3, "o3"]])
    assert po.ORCFile(str(t / "000000_0")).read().to_pylist() == [
        {"a": 1, "b": "o1"}, {"a": 2, "b": "o2"}]
    # Original rows get synthetic ROW__IDs (txn 0, bucket from the file name, running row no.).
    assert hive_ref.read(t, AB, valid_txns=valid_txns(5), bucket_count=2, sort=True) == [
        ((0, 0, 0), (1, "o1")),
        ((0, 0, 1), (2, "o2")),
        ((0, 1, 0), (3, "o3")),
    ]
    hive_ref.write(t, AB, txn=5, bucket=0, deletes=[(0, 0, 1)])
    assert hive_ref.read(t, AB, valid_txns=valid_txns(5), bucket_count=2, sort=True) == [
        ((0, 0, 0), (1, "o1")),
        ((0, 1, 0), (3, "o3")),
    ]
    assert hive_ref.acid_state(t, valid_txns(5))["original_files"] == ["000000_0", "000001_0"]


@pytest.mark.hive
def test_positional_field_names(hive_ref, tmp_path):
    """Hive SQL writes the row struct as _col0, _col1...; Hive reads it by position."""
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, inserts=[[1, "x"]], field_names=["_col0", "_col1"])
    assert events(t / "delta_0000001_0000001_0000" / "bucket_00000") == [
        ev(0, 1, 0, 0, 1, {"_col0": 1, "_col1": "x"})]
    assert hive_ref.read(t, AB, valid_txns=valid_txns(1)) == [((1, 0, 0), (1, "x"))]


@pytest.mark.hive
def test_table_properties_matter(hive_ref, tmp_path):
    t = tmp_path / "t"
    hive_ref.write(t, AB, txn=1, inserts=[[1, "x"]])
    # Without the transactional properties Hive's reader silently returns nothing.
    assert hive_ref.read(t, AB, valid_txns=valid_txns(1), conf={"transactional": "false"}) == []
    assert hive_ref.read(t, AB, valid_txns=valid_txns(1)) == [((1, 0, 0), (1, "x"))]
