"""Hive 2.3's own ACID reader (tests/hive_ref) reads what our writers produce."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hive_ref.fixtures import hive_ref  # noqa: F401

from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.task_writer import TableSpec
from spark_hive_acid.write.task_writer import DeleteWriter, InsertTarget, InsertWriter

pytestmark = pytest.mark.hive
COLUMNS = [("id", "bigint"), ("name", "string")]


def _insert(fs, t, spec, ids, *, base=False, tasks=(0, 1)):
    txn = txnlog.begin(fs, t, "overwrite" if base else "append")
    files = []
    for task in tasks:
        part = [i for i in ids if i % len(tasks) == task]
        w = InsertWriter(fs, spec, InsertTarget(txn.write_id, base=base),
                         f"{txnlog.staging_dir(fs, t, txn.write_id)}/t{task}", task)
        w.write(pa.record_batch([pa.array(part, pa.int64()), pa.array([f"n{i}" for i in part])],
                                names=["id", "name"]), [])
        files += w.close()
    commit_write(fs, spec, txn, files)


def _delete(fs, t, spec, ids):
    """Delete rows by id, finding their ROW__IDs with our reader."""
    tab = read_table(t, includeRowId="true")
    rid = tab.column("row__id").combine_chunks()
    keep = np.isin(np.asarray(tab.column("id").to_pylist()), ids)
    txn = txnlog.begin(fs, t, "delete")
    dw = DeleteWriter(fs, spec, txn.write_id, 0, txnlog.staging_dir(fs, t, txn.write_id))
    dw.write(np.asarray(rid.field("writeId"))[keep], np.asarray(rid.field("bucketId"))[keep],
             np.asarray(rid.field("rowId"))[keep], [])
    commit_write(fs, spec, txn, dw.close(), dml_partitions=[""])


def test_hive_reads_inserts_deletes_and_bases(hive_ref, tmp_path, fs):  # noqa: F811
    t = str(tmp_path / "t")
    layout = TableLayout(columns=COLUMNS)
    fs.mkdirs(t)
    save_layout(fs, t, layout)
    spec = TableSpec.of(t, layout)
    _insert(fs, t, spec, list(range(10)))
    _insert(fs, t, spec, list(range(10, 14)))
    _delete(fs, t, spec, [1, 2, 12])
    expected = sorted((i, f"n{i}") for i in range(14) if i not in (1, 2, 12))
    got = hive_ref.read(t, COLUMNS, bucket_count=2, sort=True)
    assert sorted(v for _, v in got) == expected
    assert {rid[1] for rid, _ in got} == {bucket_codec.encode(0), bucket_codec.encode(1)}
    # insert overwrite, then more deletes against the base
    _insert(fs, t, spec, [100, 101, 102], base=True, tasks=(0,))
    _delete(fs, t, spec, [101])
    got = hive_ref.read(t, COLUMNS, bucket_count=2)
    assert sorted(v for _, v in got) == [(100, "n100"), (102, "n102")]


@pytest.mark.spark
def test_hive_reads_spark_dml_results(hive_ref, acid_spark, tmp_path):  # noqa: F811
    """Append, update (moving rows between partitions), merge and delete through Spark; Hive's
    reader, run on every partition directory, returns exactly what our reader returns."""
    import os
    from spark_hive_acid.spark.table import HiveAcidTable
    path = str(tmp_path / "t")
    acid_spark.createDataFrame([(i, f"n{i}", i % 3) for i in range(30)], "id long, name string, p int") \
        .repartition(3).write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    t = HiveAcidTable.forPath(acid_spark, path)
    t.update("id % 5 = 0", set={"name": "upper(name)", "p": "(p + 1) % 3"})
    src = acid_spark.createDataFrame([(1, "x", 1), (2, "gone", 2), (40, "new", 0)], "id long, name string, p int")
    (t.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedDelete("s.name = 'gone'")
     .whenMatchedUpdate(set={"name": "s.name"}).whenNotMatchedInsertAll().execute())
    t.delete("id IN (3, 4)")
    ours = sorted(tuple(r) for r in t.toDF().collect())
    hive = []
    for part in sorted(os.listdir(path)):
        if not part.startswith("p="):
            continue
        pdir = os.path.join(path, part)
        buckets = [int(f.split("_")[1]) for d in os.listdir(pdir) if not d.startswith("_")
                   for f in os.listdir(os.path.join(pdir, d)) if f.startswith("bucket_")]
        rows = hive_ref.read(pdir, COLUMNS, bucket_count=max(buckets) + 1)
        hive += [(i, n, int(part[2:])) for _, (i, n) in rows]
    assert sorted(hive) == ours
    assert (40, "new", 0) in ours and (5, "N5", 0) in ours and not any(r[0] in (2, 3, 4) for r in ours)
