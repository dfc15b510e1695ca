"""The write path over WebHDFS (the protocol double): append, overwrite and DML through the real
`hdfs` client, read back both remotely and from the backing folder."""
import pytest
from webhdfs_double import WebHdfsDouble

from spark_hive_acid import HiveAcidTable
from spark_hive_acid.direct import read_table

pytestmark = pytest.mark.spark


@pytest.fixture
def webhdfs(tmp_path):
    with WebHdfsDouble(str(tmp_path)) as srv:
        yield srv


def test_write_and_dml_over_webhdfs(spark, webhdfs, tmp_path):
    host_port = webhdfs.url.split("://", 1)[1]
    uri = f"webhdfs://{host_port}/warehouse/t"
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "x"), (3, "c", "y")], "id int, v string, p string")
    df.write.format("hiveacid").mode("append").option("partitionBy", "p").save(uri)
    spark.createDataFrame([(4, "d", "y")], "id int, v string, p string") \
        .write.format("hiveacid").mode("append").save(uri)
    table = HiveAcidTable.forPath(spark, uri)
    table.delete("id = 2")
    table.update("id = 3", set={"v": "'C'"})
    remote = sorted((r["id"], r["v"], r["p"]) for r in read_table(uri).to_pylist())
    assert remote == [(1, "a", "x"), (3, "C", "y"), (4, "d", "y")]
    local = sorted((r["id"], r["v"], r["p"]) for r in read_table(str(tmp_path / "warehouse" / "t")).to_pylist())
    assert local == remote
    assert sorted((r.id, r.v) for r in spark.read.format("hiveacid").load(uri).collect()) == \
        [(1, "a"), (3, "C"), (4, "d")]
    assert webhdfs.count("RENAME") > 0 and webhdfs.count("CREATE") > 0


def test_compaction_and_vacuum_over_webhdfs(webhdfs, tmp_path):
    """Minor and major compaction, then vacuum, of a partitioned table on WebHDFS (Spark-free):
    the same rows and ROW__IDs remotely and in the backing folder, obsolete directories gone."""
    import os

    import pyarrow as pa

    from spark_hive_acid import write_table
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.compaction.cleaner import vacuum
    from spark_hive_acid.compaction.runner import compact

    uri = f"webhdfs://{webhdfs.url.split('://', 1)[1]}/warehouse/c"
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
    local = str(tmp_path / "warehouse" / "c")
    assert rows(local) == before
    for p in ("p=0", "p=1"):
        visible = [n for n in os.listdir(os.path.join(local, p)) if not n.startswith("_")]
        assert len(visible) == 1 and visible[0].startswith("base_")
