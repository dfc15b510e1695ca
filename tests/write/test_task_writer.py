"""Routing rows to files and publishing them, read back with the Spark-free reader."""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.acid.bucketing import bucket_ids
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.direct import read_table
from spark_hive_acid.acid.partition_tree import leaf_partitions as list_partitions
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.acid.partitions import escape_value as escape_partition_value
from spark_hive_acid.write.partitioning import group_rows, partition_path
from spark_hive_acid.write.task_writer import TableSpec
from spark_hive_acid.write.task_writer import DeleteWriter, InsertTarget, InsertWriter

LAYOUT = TableLayout(columns=[("id", "bigint"), ("name", "string")],
                     partition_columns=[("p", "string")])


def _batch(ids, parts):
    data = pa.record_batch([pa.array(ids, pa.int64()), pa.array([f"n{i}" for i in ids])],
                           names=["id", "name"])
    return data, [pa.array(parts, pa.string())]


def _table(tmp_path, fs, layout=LAYOUT):
    t = str(tmp_path / "t")
    fs.mkdirs(t)
    save_layout(fs, t, layout)
    return t, TableSpec.of(t, layout)


def _rows(t):
    tab = read_table(t)
    return sorted(zip(*[tab.column(c).to_pylist() for c in tab.column_names]))


def test_partition_names_are_escaped():
    assert escape_partition_value("a/b:c=d%") == "a%2Fb%3Ac%3Dd%25"
    assert escape_partition_value(None) == "__HIVE_DEFAULT_PARTITION__"
    assert partition_path(["a", "b"], [1, True]) == "a=1/b=true"


def test_group_rows_keeps_order():
    groups = group_rows([pa.array(["x", "y", "x", None])], np.array([1, 0, 1, 0]))
    assert [(k, idx.tolist()) for k, idx in groups] == \
        [(("x", 1), [0, 2]), (("y", 0), [1]), ((None, 0), [3])]


def test_insert_then_delete_round_trip(tmp_path, fs):
    t, spec = _table(tmp_path, fs)
    txn = txnlog.begin(fs, t, "append")
    stage = txnlog.staging_dir(fs, t, txn.write_id)
    files = []
    for task in (0, 1):
        w = InsertWriter(fs, spec, InsertTarget(txn.write_id), f"{stage}/t{task}", task)
        w.write(*_batch([task * 10 + i for i in range(4)], ["a", "b", "a", None]))
        files += w.close()
    assert {(f.partition, f.dir_name, f.bucket) for f in files} == {
        (p, "delta_0000001_0000001_0000", n) for p in ("p=a", "p=b", "p=__HIVE_DEFAULT_PARTITION__")
        for n in (0, 1)}
    # staged files are invisible until the commit
    assert read_table(t).num_rows == 0
    commit_write(fs, spec, txn, files)
    assert not os.path.exists(stage)
    assert len(_rows(t)) == 8
    d = tmp_path / "t" / "p=a" / "delta_0000001_0000001_0000"
    assert (d / "_orc_acid_version").read_bytes() == b"2"
    ev = po.ORCFile(str(d / "bucket_00001")).read().to_pylist()
    assert [(e["bucket"], e["rowId"], e["row"]["id"]) for e in ev] == \
        [(bucket_codec.encode(1), 0, 10), (bucket_codec.encode(1), 1, 12)]

    # delete id 12 (writer 1, rowId 1) and id 0 (writer 0, rowId 0)
    txn2 = txnlog.begin(fs, t, "delete")
    dw = DeleteWriter(fs, spec, txn2.write_id, 0, txnlog.staging_dir(fs, t, txn2.write_id))
    bps = np.array([bucket_codec.encode(1), bucket_codec.encode(0)], dtype=np.int32)
    dw.write(np.array([1, 1]), bps, np.array([1, 0]), [pa.array(["a", "a"])])
    staged = dw.close()
    assert [(f.dir_name, f.bucket, f.deletes) for f in staged] == \
        [("delete_delta_0000002_0000002_0000", 0, 1), ("delete_delta_0000002_0000002_0000", 1, 1)]
    commit_write(fs, spec, txn2, staged, dml_partitions=["p=a"])
    ids = sorted(r[0] for r in _rows(t))
    assert ids == [1, 2, 3, 10, 11, 13]


def test_overwrite_writes_empty_bases(tmp_path, fs):
    t, spec = _table(tmp_path, fs)
    txn = txnlog.begin(fs, t, "append")
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id), txnlog.staging_dir(fs, t, 1), 0)
    w.write(*_batch([1, 2], ["a", "b"]))
    commit_write(fs, spec, txn, w.close())
    txn = txnlog.begin(fs, t, "overwrite")
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id, base=True), txnlog.staging_dir(fs, t, 2), 0)
    w.write(*_batch([5], ["a"]))
    files = w.close()
    assert list_partitions(fs, t, 1) == ["p=a", "p=b"]
    commit_write(fs, spec, txn, files, empty_bases=["p=b"])
    assert _rows(t) == [(5, "n5", "a")]
    base_b = tmp_path / "t" / "p=b" / "base_0000002"
    assert sorted(os.listdir(base_b)) == ["_orc_acid_version", "bucket_00000"]
    assert po.ORCFile(str(base_b / "bucket_00000")).nrows == 0


def test_bucketed_collisions_are_merged_into_one_file(tmp_path, fs):
    layout = TableLayout(columns=[("id", "bigint"), ("name", "string")], bucket_columns=["id"],
                         num_buckets=2)
    t, spec = _table(tmp_path, fs, layout)
    txn = txnlog.begin(fs, t, "overwrite")
    files = []
    for task in (0, 1, 2):
        w = InsertWriter(fs, spec, InsertTarget(txn.write_id, base=True),
                         f"{txnlog.staging_dir(fs, t, 1)}/t{task}", task)
        w.write(*_batch(list(range(task * 5, task * 5 + 5)), [None] * 5)[:1], [])
        files += w.close()
    assert len(files) == 6
    commit_write(fs, spec, txn, files)
    base = tmp_path / "t" / "base_0000001"
    assert sorted(os.listdir(base)) == ["_orc_acid_version", "bucket_00000", "bucket_00001"]
    for n in (0, 1):
        ev = po.ORCFile(str(base / f"bucket_{n:05d}")).read().to_pylist()
        assert [e["rowId"] for e in ev] == list(range(len(ev)))
        assert {e["bucket"] for e in ev} == {bucket_codec.encode(n)}
        ids = pa.array([e["row"]["id"] for e in ev], pa.int64())
        assert set(bucket_ids([ids], ["bigint"], 2).tolist()) == {n}
    assert sorted(r[0] for r in _rows(t)) == list(range(15))


def test_bucketed_append_uses_statement_per_task(tmp_path, fs):
    layout = TableLayout(columns=[("id", "bigint"), ("name", "string")], bucket_columns=["id"],
                         num_buckets=4)
    t, spec = _table(tmp_path, fs, layout)
    txn = txnlog.begin(fs, t, "append")
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id, statement_per_task=True),
                     txnlog.staging_dir(fs, t, 1), 3)
    w.write(*_batch([1, 2, 3], [None] * 3)[:1], [])
    files = w.close()
    assert {f.dir_name for f in files} == {"delta_0000001_0000001_0003"}
    for f in files:
        ev = po.ORCFile(f.path).read().to_pylist()
        assert {e["bucket"] for e in ev} == {bucket_codec.encode(f.bucket, 3)}


def test_task_index_limit(tmp_path, fs):
    from spark_hive_acid.exceptions import InvalidOptionError
    t, spec = _table(tmp_path, fs)
    with pytest.raises(InvalidOptionError, match="4096"):
        InsertWriter(fs, spec, InsertTarget(1), str(tmp_path / "s"), 5000)
