"""The write path over WebHDFS (the protocol double): append, overwrite and DML through the real
`hdfs` client, read back both remotely and from the backing folder."""
import pytest
from webhdfs_double import WebHdfsDouble

from spark_hive_acid import HiveAcidTable
from spark_hive_acid.read.scan import read_table

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
