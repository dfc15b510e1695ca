"""The benchmark's baselines must compute the right answer, or its ratios compare against a wrong
pipeline: the anti-join a user would write by hand has to respect partitions."""
from pathlib import Path

import pytest

from bench.gen import TableParams, generate, table_meta
from bench.spark_cases import SparkBench, partition_columns

pytestmark = pytest.mark.spark


@pytest.fixture
def orc_bench(spark):
    before = spark.conf.get("spark.sql.orc.impl", None)
    yield SparkBench(spark, log=lambda *_: None)
    if before is None:
        spark.conf.unset("spark.sql.orc.impl")
    else:
        spark.conf.set("spark.sql.orc.impl", before)


def test_anti_join_baseline_deletes_within_each_partition_only(orc_bench, tmp_path):
    # every partition numbers its rows from 0 under the same write ids: the delete events of
    # p=0 share (writeId, bucket, rowId) with rows of p=1 and p=2
    p = TableParams(rows=3000, partitions=3, insert_deltas=1, delete_deltas=2, delete_fraction=0.2)
    path = generate(p, data_dir=Path(tmp_path), log=lambda *_: None)
    assert partition_columns(path) == ["p"]
    orc_bench.choose_orc_impl(str(path))
    rows = orc_bench.anti_join(str(path)).select("id").collect()
    assert len(rows) == table_meta(path)["visible_rows"] == 2400
    hiveacid_ids = {r.id for r in orc_bench.hiveacid(str(path)).select("id").collect()}
    assert {r.id for r in rows} == hiveacid_ids


def test_unpartitioned_table_has_no_partition_columns(tmp_path):
    p = TableParams(rows=100, partitions=1, insert_deltas=1, delete_deltas=1)
    assert partition_columns(generate(p, data_dir=Path(tmp_path), log=lambda *_: None)) == []
