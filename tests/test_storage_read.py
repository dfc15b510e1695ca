"""The read path over WebHDFS (the protocol double): Hive-written tables read as from local disk."""
import pytest
from webhdfs_double import WebHdfsDouble

from spark_hive_acid.direct import read_table

MAX = 9223372036854775807


@pytest.fixture
def webhdfs(tmp_path):
    with WebHdfsDouble(str(tmp_path)) as srv:
        yield srv


def _remote(srv, tmp_path, local_path):
    rel = str(local_path)[len(str(tmp_path)):]
    host_port = srv.url.split("://", 1)[1]
    return f"webhdfs://{host_port}{rel}"


@pytest.mark.parametrize("name,options,rows", [
    ("nation25k", {}, 23_000),
    ("nation25k", {"validWriteIds": f"d.t:3:{MAX}::"}, 24_000),
    ("single_col_minor", {}, 0),
    ("alltypes_original", {"includeRowId": "true"}, 7300),
])
def test_corpus_over_webhdfs_equals_local(webhdfs, tmp_path, corpus_copy, name, options, rows):
    local = corpus_copy(name)
    remote = read_table(_remote(webhdfs, tmp_path, local), **options)
    assert remote.num_rows == rows
    assert remote.equals(read_table(local, **options))


@pytest.mark.spark
def test_spark_reads_webhdfs(spark, webhdfs, tmp_path, corpus_copy):
    local = corpus_copy("nation25k")
    df = spark.read.format("hiveacid").load(_remote(webhdfs, tmp_path, local))
    assert df.count() == 23_000
    assert df.filter("n_nationkey = 19").count() == 0
