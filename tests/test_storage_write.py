"""The write path on remote storage: append, overwrite, DML, compaction and vacuum, read back
remotely and from a local copy of the files. Each test runs against the WebHDFS double, a real
HDFS (MiniDFSCluster, marker ``hdfs``; through the real ``hdfs`` client) and the S3 server (moto,
marker ``s3``; every file written in place, nothing renamed): ``tests/storage_targets.py``."""
import os

import pyarrow as pa
import pytest

from spark_hive_acid import HiveAcidTable
from spark_hive_acid.direct import read_table


def _rows(where, **options):
    return sorted((r["id"], r["v"], r["p"]) for r in read_table(where, **options).to_pylist())


@pytest.mark.spark
def test_write_and_dml_over_webhdfs(spark, storage_target, tmp_path):
    """Spark appends, a static overwrite of one partition, DELETE and UPDATE through
    ``hdfs://`` (WebHDFS client, options travel to the executors), read back over ``webhdfs://``
    and from a local copy."""
    target = storage_target
    uri, opts = target.uri("/warehouse/t", scheme="hdfs"), target.options()

    def write(rows, mode, **extra):
        w = spark.createDataFrame(rows, "id int, v string, p string").write.format("hiveacid")
        for k, v in {**opts, **extra}.items():
            w = w.option(k, v)
        w.mode(mode).save(uri)

    write([(1, "a", "x"), (2, "b", "x"), (3, "c", "y")], "append", partitionBy="p")
    write([(4, "d", "y")], "append")
    write([(5, "e", "z"), (6, "f", "z")], "append")
    write([(7, "g", "z")], "overwrite", partitionOverwriteMode="dynamic")
    table = HiveAcidTable.forPath(spark, uri, options=opts)
    table.delete("id = 2")
    table.update("id = 3", set={"v": "'C'"})
    want = [(1, "a", "x"), (3, "C", "y"), (4, "d", "y"), (7, "g", "z")]
    assert _rows(target.uri("/warehouse/t")) == want
    assert _rows(uri, **opts) == want
    local = target.download("/warehouse/t", str(tmp_path / "copy"))
    assert _rows(local) == want
    reader = spark.read.format("hiveacid")
    for k, v in opts.items():
        reader = reader.option(k, v)
    assert sorted(tuple(r) for r in reader.load(uri).select("id", "v", "p").collect()) == want
    assert sorted(n for n in target.names("/warehouse/t") if not n.startswith("_")) == \
        ["p=x", "p=y", "p=z"]


def test_compaction_and_vacuum_over_webhdfs(storage_target, tmp_path):
    """Minor and major compaction, then vacuum, of a partitioned table on WebHDFS (Spark-free):
    the same rows and ROW__IDs remotely and in a local copy, obsolete directories gone."""
    from spark_hive_acid import write_table
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.compaction.cleaner import vacuum
    from spark_hive_acid.compaction.runner import compact

    uri = storage_target.uri("/warehouse/c")
    for k in range(3):
        ids = list(range(k * 4, k * 4 + 4))
        write_table(pa.table({"id": pa.array(ids, pa.int64()), "p": [i % 2 for i in ids]}), uri,
                    partition_by=["p"])

    def rows(where):
        return sorted((r["row__id"]["writeId"], r["row__id"]["rowId"], r["id"], r["p"])
                      for r in read_table(where, includeRowId="true").to_pylist())

    before = rows(uri)
    table = PathTable(uri)
    assert compact(table, "minor")["partitionsCompacted"] == 2
    assert compact(table, "major")["partitionsCompacted"] == 2
    assert rows(uri) == before
    assert vacuum(table.fs, table.path, retention_hours=0).to_json()["numRemoved"] == 8
    local = storage_target.download("/warehouse/c", str(tmp_path / "copy"))
    assert rows(local) == before
    for p in ("p=0", "p=1"):
        visible = [n for n in os.listdir(os.path.join(local, p)) if not n.startswith("_")]
        assert len(visible) == 1 and visible[0].startswith("base_")
