"""Issue 14 with real Spark: the SQL route (a view defined again before each statement sees every
commit; CREATE TABLE refused at CREATE with the route), typos through spark.read / df.write, time
travel and the table API (snapshot, history(limit), detail, isHiveAcidTable, repr), DML analysed
before a write id is allocated, and driver-side errors of the library's own classes."""
from __future__ import annotations

from pathlib import Path

import pytest

import spark_hive_acid as sha
from spark_hive_acid.exceptions import (
    HiveAcidError,
    InvalidOptionError,
    TableNotFoundError,
    UnknownOptionError,
)
from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered
from spark_hive_acid.txn import pathlog

pytestmark = pytest.mark.spark


@pytest.fixture
def table(spark, tmp_path):
    ensure_registered(spark)
    path = str(tmp_path / "orders")
    spark.createDataFrame([(1, "a"), (2, "b")], "id int, s string") \
        .write.format("hiveacid").mode("append").save(path)
    return path


def _ids(df):
    return sorted(r[0] for r in df.collect())


def test_a_registered_view_sees_every_commit_made_before_each_statement(spark, table):
    sha.register_view(spark, "orders_v", table)
    assert _ids(sha.sql(spark, "SELECT id FROM orders_v")) == [1, 2]
    spark.createDataFrame([(3, "c")], "id int, s string").createOrReplaceTempView("staging")
    sha.sql(spark, "INSERT INTO orders_v SELECT id, s FROM staging")
    assert _ids(sha.sql(spark, "SELECT id FROM orders_v")) == [1, 2, 3]
    # a commit from elsewhere (the DataFrame API) is seen by the next statement too
    spark.createDataFrame([(4, "d")], "id int, s string").write.format("hiveacid") \
        .mode("append").save(table)
    assert _ids(sha.sql(spark, "SELECT id FROM orders_v WHERE id > 1")) == [2, 3, 4]
    sha.sql(spark, "INSERT OVERWRITE orders_v VALUES (9, 'z')")
    assert _ids(sha.sql(spark, "SELECT id FROM orders_v")) == [9]
    # the plain temporary view is the stale one this route exists for
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW stale_v USING hiveacid OPTIONS (path '{table}')")
    assert _ids(spark.sql("SELECT id FROM stale_v")) == [9]
    sha.sql(spark, "INSERT INTO orders_v VALUES (10, 'y')")
    assert _ids(spark.sql("SELECT id FROM stale_v")) == [9]  # PySpark 4.3 keeps the first plan


def test_catalog_tables_are_refused_before_anything_is_written(spark, table, tmp_path):
    with pytest.raises(Exception, match="CREATE TABLE ... USING hiveacid does not work .*"
                                        "register_view"):
        spark.sql(f"CREATE TABLE ct_refused USING hiveacid LOCATION '{table}'")
    assert not spark.catalog.tableExists("ct_refused")
    # with a column list Spark never asks the source at CREATE: the first use says the route
    spark.sql(f"CREATE TABLE ct_cols (id int, s string) USING hiveacid LOCATION '{table}'")
    try:
        with pytest.raises(Exception, match="was given no table .*register_view"):
            spark.sql("SELECT * FROM ct_cols").collect()
        with pytest.raises(Exception, match="was given no table"):
            spark.sql("INSERT INTO ct_cols VALUES (5, 'e')")
    finally:
        spark.sql("DROP TABLE IF EXISTS ct_cols")
    with pytest.raises(Exception, match="was given no table"):
        spark.createDataFrame([(6, "f")], "id int, s string").write.format("hiveacid") \
            .mode("append").saveAsTable("sat_refused")
    assert _ids(spark.read.format("hiveacid").load(table)) == [1, 2]  # nothing written


def test_typos_through_spark_name_the_option_meant(spark, table):
    with pytest.raises(Exception, match="unknown option 'validwriteid'; did you mean validWriteIds"):
        spark.read.format("hiveacid").option("validWriteId", "x").load(table).collect()
    with pytest.raises(Exception, match="unknown option 'partitionedby'; did you mean partitionBy"):
        spark.createDataFrame([(7, "g")], "id int, s string").write.format("hiveacid") \
            .option("partitionedBy", "s").mode("append").save(table + "_new")
    assert not HiveAcidTable.isHiveAcidTable(spark, table + "_new")


def test_time_travel_snapshot_history_detail(spark, table):
    t = HiveAcidTable.forPath(spark, table)
    t.delete("id = 1")
    spark.createDataFrame([(3, "c")], "id int, s string").write.format("hiveacid") \
        .mode("append").save(table)
    assert _ids(t.toDF(version=1)) == [1, 2]
    assert _ids(t.toDF(version=2)) == [2]
    assert _ids(spark.read.format("hiveacid").option("versionAsOf", 2).load(table)) == [2]
    assert t.snapshot() == "3:9223372036854775807::"
    assert _ids(spark.read.format("hiveacid").option("validWriteIds", t.snapshot()).load(table)) \
        == [2, 3]
    assert [(r.writeId, r.operation) for r in t.history(limit=2).collect()] == \
        [(3, "append"), (2, "delete")]
    d = t.detail().first()
    files = [f for f in Path(table).glob("*delta_*/bucket_*")]  # no base: every file is read
    assert (d.location, d.kind, d.currentWriteId, d.numFiles, d.columns) == \
        (table, "full-acid", 3, len(files), ["id", "s"])
    assert d.sizeInBytes == sum(f.stat().st_size for f in files)
    assert HiveAcidTable.isHiveAcidTable(spark, table)
    assert repr(t.alias("o")) == f"HiveAcidTable.forPath(spark, {table!r}).alias('o')"


def test_dml_that_does_not_analyse_allocates_no_write_id(spark, table):
    t = HiveAcidTable.forPath(spark, table)
    before = pathlog.history(t._fs, table)
    with pytest.raises(Exception, match="nosuch"):
        t.delete("nosuch = 1")
    with pytest.raises(Exception, match="nosuch"):
        t.update("id = 1", set={"s": "nosuch || 'x'"})
    source = spark.createDataFrame([(1, "x")], "id int, s string")
    with pytest.raises(Exception, match="zz"):
        t.alias("t").merge(source.alias("src"), "t.id = src.zz").whenMatchedDelete().execute()
    assert pathlog.history(t._fs, table) == before
    # a failure after the write id was allocated: history tells the real error
    with pytest.raises(Exception, match="boom"):
        t.update("id = 1", set={"s": "raise_error('boom')"})
    failed = t.history(limit=1).first()
    assert failed.state == "aborted" and "boom" in failed.reason


def test_driver_side_errors_are_the_librarys_classes(spark, table, tmp_path):
    with pytest.raises(TableNotFoundError):
        HiveAcidTable.forPath(spark, str(tmp_path / "missing"))
    t = HiveAcidTable.forPath(spark, table)
    with pytest.raises(InvalidOptionError, match="write id 9 .* is not committed"):
        t.toDF(version=9)
    with pytest.raises(UnknownOptionError):
        HiveAcidTable.forPath(spark, table, {"splitsize_": "1"})
    with pytest.raises(HiveAcidError):
        t.history(limit=0)
