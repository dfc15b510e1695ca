"""The read path over WebHDFS: Hive-written tables (corpus copies) read remotely equal the same
tables read from local disk. Each test runs against the WebHDFS double and a real HDFS
(MiniDFSCluster, marker ``hdfs``), through ``webhdfs://`` and ``hdfs://`` (WebHDFS client)."""
import pytest

from spark_hive_acid.direct import read_table

MAX = 9223372036854775807


@pytest.mark.parametrize("name,options,rows", [
    ("nation25k", {}, 23_000),
    ("nation25k", {"validWriteIds": f"d.t:3:{MAX}::"}, 24_000),
    ("single_col_minor", {}, 0),
    ("alltypes_original", {"includeRowId": "true"}, 7300),
])
def test_corpus_over_webhdfs_equals_local(webhdfs_target, corpus_copy, name, options, rows):
    local = corpus_copy(name)
    uri = webhdfs_target.upload(local, f"/warehouse/{name}")
    remote = read_table(uri, **options)
    assert remote.num_rows == rows
    assert remote.equals(read_table(local, **options))
    over_hdfs = read_table(webhdfs_target.uri(f"/warehouse/{name}", scheme="hdfs"),
                           **webhdfs_target.options(), **options)
    assert over_hdfs.equals(remote)


@pytest.mark.spark
def test_spark_reads_webhdfs(spark, webhdfs_target, corpus_copy):
    uri = webhdfs_target.upload(corpus_copy("nation25k"), "/warehouse/nation25k")
    df = spark.read.format("hiveacid").load(uri)
    assert df.count() == 23_000
    assert df.filter("n_nationkey = 19").count() == 0
    reader = spark.read.format("hiveacid")
    for k, v in webhdfs_target.options().items():
        reader = reader.option(k, v)
    via_hdfs = reader.load(webhdfs_target.uri("/warehouse/nation25k", scheme="hdfs"))
    assert via_hdfs.count() == 23_000
