"""Task writers hold bounded memory whatever the number of partitions or delete events (issue 13
item 13): rows of partitions whose file is not open are held (up to PENDING_BYTES) and written in
bulk, at most MAX_OPEN_FILES files are open per task (evicted files become segments, concatenated
on close into the one file per partition and bucket that Hive expects), and delete events of a
DML are streamed from sorted input instead of collected. ``python -m bench.partition_memory``
measures the peak for 2000 partitions (docs/benchmarks.md)."""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

from spark_hive_acid import read_table
from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.exceptions import HiveAcidError
from spark_hive_acid.txn import pathlog
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write import task_writer
from spark_hive_acid.write.task_writer import DeleteWriter, InsertTarget, InsertWriter, TableSpec

ROW = [("id", "bigint"), ("v", "string")]


def _table(tmp_path, fs, **layout):
    t = str(tmp_path / "t")
    fs.mkdirs(t)
    lay = TableLayout(columns=ROW, partition_columns=[("p", "int")], **layout)
    save_layout(fs, t, lay)
    return t, TableSpec.of(t, lay)


@pytest.mark.parametrize("held", [True, False])
@pytest.mark.parametrize("props", [{}, {"transactional_properties": "insert_only"}])
def test_many_partitions_interleaved_keep_few_files_open(tmp_path, fs, monkeypatch, props, held):
    """Rows held until a partition has enough (``held``: this data never has enough, so each file
    is written once at close), or written at once (every batch then evicts files: segments)."""
    monkeypatch.setattr(task_writer, "MAX_OPEN_FILES", 3)
    if not held:
        monkeypatch.setattr(task_writer, "FLUSH_KEY_BYTES", 1)
    t, spec = _table(tmp_path, fs, properties=props)
    txn = pathlog.begin(fs, t, "append")
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id), f"{t}/_hiveacid_staging/x", 0)
    rng = np.random.default_rng(1)
    expected = []
    for b in range(30):  # every batch touches most of the 10 partitions: constant eviction
        parts = rng.integers(0, 10, 50)
        ids = np.arange(b * 50, b * 50 + 50)
        w.write(pa.record_batch([pa.array(ids), pa.array([f"v{i}" for i in ids])],
                                names=["id", "v"]), [pa.array(parts, pa.int32())])
        assert len(w._files) <= 3
        if held:
            assert w._pending and not w._spilled and not w._files
        elif b > 0:
            assert w._spilled and not w._pending
        expected += list(zip(ids.tolist(), [f"v{i}" for i in ids], parts.tolist()))
    staged = w.close()
    assert sorted(f.partition for f in staged) == [f"p={k}" for k in range(10)]
    commit_write(fs, spec, txn, staged)
    got = read_table(t, includeRowId="false" if props else "true")
    assert sorted(zip(got.column("id").to_pylist(), got.column("v").to_pylist(),
                      got.column("p").to_pylist())) == sorted(expected)
    for k in range(10):  # one file per partition; ACID row ids 0..n-1, as if it stayed open
        d = tmp_path / "t" / f"p={k}" / "delta_0000001_0000001_0000"
        files = [f for f in os.listdir(d) if not f.startswith("_")]
        assert len(files) == 1 and ".segment" not in files[0]
        if not props:
            ev = po.ORCFile(str(d / files[0])).read(columns=["rowId", "bucket"])
            assert ev.column("rowId").to_pylist() == list(range(ev.num_rows))
            key_index = po.ORCFile(str(d / files[0])).metadata[b"hive.acid.key.index"].decode()
            assert key_index == f"1,{bucket_codec.encode(0)},{ev.num_rows - 1};"
    assert not any(".segment" in f for _, _, fs_ in os.walk(t) for f in fs_)


def _deletes(n, seed=0):
    rng = np.random.default_rng(seed)
    owid = np.sort(rng.integers(1, 4, n))
    rid = rng.integers(0, 1 << 30, n)
    order = np.lexsort((rid, owid))
    return owid[order], np.full(n, bucket_codec.encode(0), np.int32), rid[order]


def test_sorted_delete_events_stream_into_one_file(tmp_path, fs):
    t, spec = _table(tmp_path, fs)
    owid, bp, rid = _deletes(200_000)
    w = DeleteWriter(fs, spec, 5, 0, f"{t}/_hiveacid_staging/d", sorted_input=True)
    for lo in range(0, len(rid), 7_000):  # many batches of one group
        sl = slice(lo, lo + 7_000)
        w.write(owid[sl], bp[sl], rid[sl], [pa.array([1] * len(rid[sl]), pa.int32())])
        assert w._groups == {}  # nothing collected: written as it comes
    staged = w.close()
    assert [(f.partition, f.bucket, f.deletes) for f in staged] == [("p=1", 0, 200_000)]
    ev = po.ORCFile(staged[0].path).read(columns=["originalTransaction", "rowId"])
    assert ev.column("originalTransaction").to_pylist() == owid.tolist()
    assert ev.column("rowId").to_pylist() == rid.tolist()
    meta = po.ORCFile(staged[0].path).metadata
    assert meta[b"hive.acid.stats"] == b"0,0,200000"
    last = meta[b"hive.acid.key.index"].decode().rstrip(";").split(";")[-1]
    assert last == f"{owid[-1]},{bp[-1]},{rid[-1]}"


def test_unsorted_input_to_a_streaming_delete_writer_is_refused(tmp_path, fs):
    t, spec = _table(tmp_path, fs)
    owid, bp, rid = _deletes(100)
    w = DeleteWriter(fs, spec, 5, 0, f"{t}/_hiveacid_staging/d", sorted_input=True)
    with pytest.raises(HiveAcidError, match="not sorted"):
        w.write(owid[::-1].copy(), bp, rid[::-1].copy(), [pa.array([1] * 100, pa.int32())])
    w2 = DeleteWriter(fs, spec, 5, 0, f"{t}/_hiveacid_staging/e", sorted_input=True)
    w2.write(owid[:50], bp[:50], rid[:50], [pa.array([1] * 50, pa.int32())])
    w2.write(owid[:50], bp[:50], rid[:50], [pa.array([2] * 50, pa.int32())])
    with pytest.raises(HiveAcidError, match="arrived after others"):
        w2.write(owid[50:], bp[50:], rid[50:], [pa.array([1] * 50, pa.int32())])
