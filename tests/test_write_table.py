"""``write_table``: Spark-free appends and overwrites of Arrow data, into path-mode and metastore
tables, with the same files and commit protocol as the Spark writer (no JVM for the write)."""
from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.orc as po
import pytest

from hive_ref.fixtures import hive_ref  # noqa: F401

from spark_hive_acid import read_table, write_table
from spark_hive_acid.exceptions import InvalidOptionError, SchemaMismatchError
from spark_hive_acid.txn import pathlog


def _data(ids, ds=None):
    cols = {"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i}" for i in ids])}
    if ds is not None:
        cols["ds"] = pa.array([ds(i) for i in ids])
    return pa.table(cols)


def _rows(path, **opts):
    t = read_table(path, **opts)
    return sorted(tuple(r.values()) for r in t.to_pylist())


def _dirs(path):
    return sorted(os.path.relpath(os.path.join(d, n), path) for d, ns, _ in os.walk(path)
                  for n in ns if n.startswith(("base_", "delta_", "delete_delta_")))


def test_append_then_overwrite_a_path_table(tmp_path):
    path = str(tmp_path / "t")
    m = write_table(_data([1, 2, 3]), path)
    assert m["numInsertedRows"] == 3 and m["writeId"] == 1
    write_table(_data([4]).to_batches()[0], path)  # a single RecordBatch
    assert _rows(path) == [(i, f"n{i}") for i in (1, 2, 3, 4)]
    write_table(_data([9]), path, mode="overwrite")
    assert _rows(path) == [(9, "n9")]
    assert _dirs(path) == ["base_0000003", "delta_0000001_0000001_0000",
                           "delta_0000002_0000002_0000"]
    base = tmp_path / "t" / "base_0000003"
    assert sorted(os.listdir(base)) == ["_orc_acid_version", "bucket_00000"]
    meta = po.ORCFile(str(base / "bucket_00000")).metadata
    assert meta[b"hive.acid.stats"] == b"1,0,0" and meta[b"hive.acid.key.index"] == b"3,536870912,0;"
    # the log recorded each commit, and older snapshots still read what they saw
    assert [h["operation"] for h in pathlog.history(_fs(), path)] == \
        ["overwrite", "append", "create"]
    assert _rows(path, validWriteIds=f"t:2:{2**63 - 1}::") == [(i, f"n{i}") for i in (1, 2, 3, 4)]
    assert not (tmp_path / "t" / "_hiveacid_staging").exists()  # no empty staging left


def _fs():
    from spark_hive_acid.io.filesystem import LocalFileSystem
    return LocalFileSystem()


def test_partitioned_static_and_dynamic_overwrite_from_batches(tmp_path):
    path = str(tmp_path / "t")
    reader = _data(range(6), ds=lambda i: f"d{i % 3}").to_reader(max_chunksize=2)
    write_table(reader, path, partition_by=["ds"])
    assert sorted(os.listdir(path)) == ["_hiveacid_table.json", "_hiveacid_txnlog",
                                        "ds=d0", "ds=d1", "ds=d2"]
    write_table(_data([10], ds=lambda i: "d1"), path, mode="overwrite",
                partition_overwrite_mode="dynamic")
    assert _rows(path) == [(0, "n0", "d0"), (2, "n2", "d2"), (3, "n3", "d0"), (5, "n5", "d2"),
                           (10, "n10", "d1")]
    write_table(iter(_data([20], ds=lambda i: "d9").to_batches()), path, mode="overwrite")
    assert _rows(path) == [(20, "n20", "d9")]  # static: every other partition got an empty base
    assert "base_0000003" in os.listdir(tmp_path / "t" / "ds=d0")


def test_bad_input_writes_nothing(tmp_path):
    path = str(tmp_path / "t")
    write_table(_data([1]), path)
    with pytest.raises(SchemaMismatchError, match="extra"):
        write_table(_data([2]).append_column("extra", pa.array([1])), path)
    with pytest.raises(InvalidOptionError, match="mode"):
        write_table(_data([2]), path, mode="upsert")
    with pytest.raises(InvalidOptionError, match="partitioned by"):
        write_table(_data([2]), path, partition_by=["name"])
    with pytest.raises(InvalidOptionError, match="Arrow data"):
        write_table([{"id": 1}], path)
    with pytest.raises(InvalidOptionError, match="either a path"):
        write_table(_data([2]), path, table="db.t")
    assert _rows(path) == [(1, "n1")]
    assert [h["writeId"] for h in pathlog.history(_fs(), path)] == [1]  # no write id was opened


def test_a_failing_batch_aborts_the_write(tmp_path):
    path = str(tmp_path / "t")
    write_table(_data([1]), path)

    def batches():
        yield _data([2]).to_batches()[0]
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError, match="source failed"):
        write_table(batches(), path)
    assert _rows(path) == [(1, "n1")]
    assert [(h["writeId"], h["state"]) for h in pathlog.history(_fs(), path)] == \
        [(2, "aborted"), (1, "committed")]
    assert _dirs(path) == ["delta_0000001_0000001_0000"]


@pytest.mark.hive
def test_hive_reads_a_bucketed_table_written_without_spark(hive_ref, tmp_path):  # noqa: F811
    path = str(tmp_path / "t")
    write_table(_data(range(40)), path, bucket_by=["id"], num_buckets=4)
    write_table(_data(range(40, 50)), path)
    got = hive_ref.read(path, [("id", "bigint"), ("name", "string")], bucket_count=4)
    assert sorted(v for _, v in got) == [(i, f"n{i}") for i in range(50)]
    files = sorted(f for d in _dirs(path) for f in os.listdir(tmp_path / "t" / d)
                   if f.startswith("bucket_"))
    assert files == sorted([f"bucket_0000{n}" for n in range(4)] * 2)


def test_metastore_table_by_name(metastore, tmp_path):
    name = f"wt_{uuid.uuid4().hex[:8]}"
    with metastore.client() as c:
        c.create_table("default", name, [("id", "bigint"), ("name", "string")],
                       partition_keys=[("ds", "string")], bucket_cols=["id"], num_buckets=2,
                       location=f"file:{tmp_path / name}")
        before = set(c.get_open_txns_info().open_ids)
    opts = metastore.options()
    m = write_table(_data([1, 2], ds=lambda i: "a"), table=f"default.{name}", options=opts)
    assert m["numInsertedRows"] == 2 and m["txnId"] > 0
    write_table(_data([3], ds=lambda i: "b"), table=f"default.{name}", options=opts,
                mode="overwrite")
    got = read_table("", table=f"default.{name}", metastoreUri=metastore.uri)
    assert sorted(tuple(r.values()) for r in got.to_pylist()) == [(3, "n3", "b")]
    with metastore.client() as c:
        assert sorted(p.name for p in c.list_partitions("default", name)) == ["ds=a", "ds=b"]
        assert set(c.get_open_txns_info().open_ids) == before
        assert c.show_locks("default", name) == []
    assert not (tmp_path / name / "_hiveacid_txnlog").exists()
