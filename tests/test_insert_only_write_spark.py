"""Writing insert-only tables through Spark (``df.write.format("hiveacid")``): several tasks, the
files they name, bucketed overwrites merged per bucket, and DELETE / UPDATE / MERGE refused."""
from __future__ import annotations

import os
import re
from collections import Counter

import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from spark_hive_acid.exceptions import UnsupportedOperationError
from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered

pytestmark = pytest.mark.spark
MM = "transactional_properties=insert_only"
SCHEMA = "id long, v string, p int"


@pytest.fixture
def acid_spark(spark):
    ensure_registered(spark)
    return spark


def _rows(df):
    return Counter(tuple(r) for r in df.select("id", "v", "p").collect())


def _files(root, pattern):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root)
                  for f in fs if re.search(pattern, os.path.relpath(os.path.join(d, f), root)))


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_appends_and_overwrites_from_several_tasks(acid_spark, tmp_path, fmt):
    spark = acid_spark
    path = str(tmp_path / "t")
    first = [(i, f"v{i}", i % 2) for i in range(30)]
    (spark.createDataFrame(first, SCHEMA).repartition(3).write.format("hiveacid")
     .option("partitionBy", "p").option("tableProperties", MM).option("fileFormat", fmt)
     .mode("append").save(path))
    files = _files(path, r"^p=\d/delta_0000001_0000001_0000/")
    # one file per (task, partition), named after the task: 000000_0, 000001_0, 000002_0
    assert {os.path.basename(f) for f in files} == {"000000_0", "000001_0", "000002_0"}
    magic = b"PAR1" if fmt == "parquet" else b"ORC"
    assert all(open(os.path.join(path, f), "rb").read(4).startswith(magic) for f in files)

    second = [(100 + i, "x", 1) for i in range(5)]
    spark.createDataFrame(second, SCHEMA).coalesce(1).write.format("hiveacid") \
        .option("partitionOverwriteMode", "dynamic").mode("overwrite").save(path)
    model = Counter(r for r in first if r[2] == 0) + Counter(second)
    assert _rows(spark.read.format("hiveacid").load(path)) == model
    assert _files(path, r"^p=1/base_0000002/") == ["p=1/base_0000002/000000_0"]

    spark.createDataFrame([(7, "only", 0)], SCHEMA).write.format("hiveacid") \
        .mode("overwrite").save(path)
    assert _rows(spark.read.format("hiveacid").load(path)) == Counter([(7, "only", 0)])
    # the static overwrite left a base with one empty file in the partition that got no rows
    empty = os.path.join(path, "p=1", "base_0000003", "000000_0")
    rows = (pq.ParquetFile(empty).metadata.num_rows if fmt == "parquet"
            else po.ORCFile(empty).nrows)
    assert rows == 0
    at2 = spark.read.format("hiveacid").option(
        "validWriteIds", "default.t:2:9223372036854775807::").load(path)
    assert _rows(at2) == model
    assert not _files(path, r"(bucket_|_orc_acid_version|delete_delta)")


def test_bucketed_overwrite_from_several_tasks_has_one_file_per_bucket(acid_spark, tmp_path):
    spark = acid_spark
    path = str(tmp_path / "t")
    rows = [(i, f"v{i}", 0) for i in range(60)]
    df = spark.createDataFrame(rows, SCHEMA).repartition(3)
    (df.write.format("hiveacid").option("tableProperties", MM).option("fileFormat", "parquet")
     .option("partitionBy", "p")
     .option("bucketBy", "id").option("numBuckets", "4").mode("append").save(path))
    # appends: a statement directory per task, one file per bucket in each
    assert sorted(os.listdir(os.path.join(path, "p=0"))) == [
        f"delta_0000001_0000001_{s:04d}" for s in range(3)]
    df.write.format("hiveacid").mode("overwrite").save(path)
    base = os.path.join(path, "p=0", "base_0000002")
    assert sorted(os.listdir(base)) == ["000000_0", "000001_0", "000002_0", "000003_0"]
    assert sum(pq.ParquetFile(os.path.join(base, f)).metadata.num_rows
               for f in os.listdir(base)) == 60
    assert _rows(spark.read.format("hiveacid").load(path)) == Counter(rows)


def test_delete_update_merge_are_refused_before_any_transaction(acid_spark, tmp_path):
    spark = acid_spark
    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "a", 0), (2, "b", 1)], SCHEMA).write.format("hiveacid") \
        .option("partitionBy", "p").option("tableProperties", MM).mode("append").save(path)
    t = HiveAcidTable.forPath(spark, path)
    src = spark.createDataFrame([(1, "z", 0)], SCHEMA)
    calls = [("DELETE", lambda: t.delete("id = 1")),
             ("UPDATE", lambda: t.update("id = 1", set={"v": "'z'"})),
             ("MERGE", lambda: t.alias("t").merge(src.alias("s"), "t.id = s.id")
              .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())]
    for op, call in calls:
        with pytest.raises(UnsupportedOperationError, match=f"Cannot {op} .* insert-only table.*"
                                                             "Hive refuses this too"):
            call()
    assert [h["writeId"] for h in t._ref.history()] == [1]  # no write id was even allocated
    assert _rows(t.toDF()) == Counter([(1, "a", 0), (2, "b", 1)])
