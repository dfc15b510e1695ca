"""File level: event layout, footer metadata, key index, delete ordering, names (no Spark)."""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest

from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.write.acid_file import ACID_FIELDS, AcidFileWriter, write_empty_file
from spark_hive_acid.write.orc_tail import add_user_metadata_to_bytes

from conftest import ROW_TYPE

EXPECTED_TYPE = ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
                 "currentTransaction:bigint,row:struct<id:bigint,name:string>>")


def _rows(n: int, start: int = 0) -> pa.RecordBatch:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.record_batch([pa.array(ids), pa.array([f"n{i}" for i in ids])], names=["id", "name"])


def _meta(path: str) -> dict:
    with open(path, "rb") as f:
        return {k: v.decode() for k, v in pyorc.Reader(f).user_metadata.items()}


def test_insert_file_events_and_metadata(tmp_path, fs):
    path = str(tmp_path / "delta_0000007_0000007_0000" / "bucket_00001")
    bp = bucket_codec.encode(1, 0)
    w = AcidFileWriter(fs, path, ROW_TYPE)
    w.write_inserts(_rows(3), 7, bp)
    w.write_inserts(_rows(2, 3), 7, bp)
    summary = w.close()
    assert (summary.inserts, summary.deletes) == (5, 0)
    with open(path, "rb") as f:
        r = pyorc.Reader(f)
        assert str(r.schema) == EXPECTED_TYPE
        events = list(r)
    assert events == [(0, 7, 536936448, i, 7, (i, f"n{i}")) for i in range(5)]
    assert _meta(path) == {"hive.acid.key.index": "7,536936448,4;", "hive.acid.stats": "5,0,0",
                           "hive.acid.version": "2"}
    orc = po.ORCFile(path)
    assert orc.compression == "ZLIB" and orc.row_index_stride == 10000
    assert tuple(orc.schema.names) == ACID_FIELDS


@pytest.mark.parametrize("codec", ["NONE", "ZLIB", "SNAPPY", "ZSTD", "LZ4"])
def test_key_index_one_entry_per_stripe(tmp_path, fs, codec):
    path = str(tmp_path / f"bucket_{codec}")
    w = AcidFileWriter(fs, path, ROW_TYPE, compression=codec, stripe_size=64 * 1024)
    bp = bucket_codec.encode(3, 2)
    for i in range(40):
        w.write_inserts(_rows(5000, i * 5000), 9, bp)
    w.close()
    orc = po.ORCFile(path)
    assert orc.nstripes > 1
    ends = np.cumsum([orc.read_stripe(i, columns=["rowId"]).num_rows for i in range(orc.nstripes)])
    expected = "".join(f"9,{bp},{e - 1};" for e in ends)
    assert _meta(path)["hive.acid.key.index"] == expected
    assert orc.read().num_rows == 200_000



def test_delete_key_index_one_entry_per_stripe(tmp_path, fs):
    """Last keys of several stripes of random sorted delete events, against pyarrow's own read of
    each stripe (the writer seeks to them through the row index instead of decoding stripes)."""
    path = str(tmp_path / "bucket_00000")
    rng = np.random.default_rng(5)
    n = 300_000
    owid = np.sort(rng.integers(1, 50, n))
    bp = np.full(n, bucket_codec.encode(0, 0), np.int32)
    rid = rng.integers(0, 1 << 40, n)
    order = np.lexsort((rid, owid))
    w = AcidFileWriter(fs, path, ROW_TYPE, stripe_size=64 * 1024)
    for lo in range(0, n, 40_000):
        sl = order[lo:lo + 40_000]
        w.write_deletes(owid[sl], bp[sl], rid[sl], 60)
    w.close()
    orc = po.ORCFile(path)
    assert orc.nstripes > 2
    expected = ""
    for i in range(orc.nstripes):
        t = orc.read_stripe(i, columns=["originalTransaction", "bucket", "rowId"])
        expected += ",".join(str(t.column(c)[t.num_rows - 1].as_py()) for c in range(3)) + ";"
    assert _meta(path)["hive.acid.key.index"] == expected

def test_delete_file_sorted_with_null_rows(tmp_path, fs):
    path = str(tmp_path / "bucket_00000")
    owid = np.array([1, 1, 2]); bp = np.full(3, bucket_codec.encode(0, 0)); rid = np.array([0, 4, 1])
    w = AcidFileWriter(fs, path, ROW_TYPE)
    w.write_deletes(owid, bp, rid, 5)
    w.close()
    with open(path, "rb") as f:
        r = pyorc.Reader(f)
        assert str(r.schema) == EXPECTED_TYPE  # delete files keep the typed row struct
        assert list(r) == [(2, 1, 536870912, 0, 5, None), (2, 1, 536870912, 4, 5, None),
                           (2, 2, 536870912, 1, 5, None)]
    assert _meta(path) == {"hive.acid.key.index": "2,536870912,1;", "hive.acid.stats": "0,0,3",
                           "hive.acid.version": "2"}


def test_empty_file_is_valid_orc(tmp_path, fs):
    path = str(tmp_path / "base_0000003" / "bucket_00000")
    write_empty_file(fs, path, ROW_TYPE, "ZLIB")
    orc = po.ORCFile(path)
    assert orc.nrows == 0 and tuple(orc.schema.names) == ACID_FIELDS
    assert _meta(path)["hive.acid.stats"] == "0,0,0"


def test_insert_and_delete_do_not_mix(tmp_path, fs):
    w = AcidFileWriter(fs, str(tmp_path / "b"), ROW_TYPE)
    w.write_inserts(_rows(1), 1, bucket_codec.encode(0))
    with pytest.raises(ValueError):
        w.write_deletes(np.array([1]), np.array([bucket_codec.encode(0)]), np.array([0]), 2)
    w.discard()
    assert not os.path.exists(tmp_path / "b")


def test_orc_tail_patch_keeps_existing_metadata():
    sink = pa.BufferOutputStream()
    po.write_table(pa.table({"a": [1, 2, 3]}), sink, compression="zlib")
    data = add_user_metadata_to_bytes(sink.getvalue().to_pybytes(), {"k1": b"v1"})
    data = add_user_metadata_to_bytes(data, {"k2": b"x" * 70000})  # spans several chunks
    orc = po.ORCFile(pa.BufferReader(data))
    assert orc.read().column("a").to_pylist() == [1, 2, 3]
    import io
    meta = pyorc.Reader(io.BytesIO(data)).user_metadata
    assert meta["k1"] == b"v1" and meta["k2"] == b"x" * 70000
