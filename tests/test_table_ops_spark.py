"""Issue 26's table semantics through Spark: an empty table made with ``HiveAcidTable.create`` at a
path keeps every column (SQL ``SELECT *`` and ``INSERT INTO`` a view over it), static partition
overwrite with ``df.write`` (``replaceWhere``, ``partitionSpec``), ``truncate``,
``dropPartitions``, ``addColumns`` / ``mergeSchema``, ``restoreToVersion``, and char/varchar
columns."""
from __future__ import annotations

import random
from collections import Counter

import pytest

import spark_hive_acid as sha
from spark_hive_acid import HiveAcidTable
from spark_hive_acid.exceptions import HiveAcidError

pytestmark = pytest.mark.spark
SCHEMA = "id int, v string, day string"


def _rows(t: HiveAcidTable, **kw) -> Counter:
    return Counter(tuple(r) for r in t.toDF(**kw).select("id", "v", "day").collect())


def _write(spark, path, rows, mode="append", **options):
    w = spark.createDataFrame(rows, SCHEMA).write.format("hiveacid").mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    w.save(path)


def test_create_an_empty_table_at_a_path_and_use_it_from_sql(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HiveAcidTable.create(spark, path, "id int, name varchar(3), code char(4), day string",
                             partitionBy="day", bucketBy=["id"], numBuckets=2)
    df = t.toDF()
    assert df.columns == ["id", "name", "code", "day"] and df.count() == 0
    sha.register_view(spark, "issue26_empty", path)
    assert sha.sql(spark, "SELECT * FROM issue26_empty").columns == ["id", "name", "code", "day"]
    sha.sql(spark, "INSERT INTO issue26_empty VALUES (1, 'abcdef', 'x', 'a'), (2, 'b', 'yy', 'b')")
    got = sorted(tuple(r) for r in sha.sql(spark, "SELECT * FROM issue26_empty").collect())
    assert got == [(1, "abc", "x   ", "a"), (2, "b", "yy  ", "b")]  # Hive's varchar/char rules
    detail = t.detail().first()
    assert detail["partitionColumns"] == ["day"] and detail["numBuckets"] == 2
    with pytest.raises(HiveAcidError, match="already holds a table"):
        HiveAcidTable.create(spark, path, "id int")
    assert HiveAcidTable.create(spark, path, "id int", ifNotExists=True).toDF().count() == 2


def test_an_empty_dataframe_written_with_partition_by_keeps_its_partition_columns(spark, tmp_path):
    path = str(tmp_path / "e")
    spark.createDataFrame([], SCHEMA).write.format("hiveacid").option("partitionBy", "day") \
        .mode("append").save(path)
    sha.register_view(spark, "issue26_empty_df", path)
    assert sha.sql(spark, "SELECT * FROM issue26_empty_df").columns == ["id", "v", "day"]
    sha.sql(spark, "INSERT INTO issue26_empty_df VALUES (1, 'a', 'd1')")
    assert [tuple(r) for r in sha.sql(spark, "SELECT * FROM issue26_empty_df").collect()] == [
        (1, "a", "d1")]


def test_static_partition_overwrite_with_df_write(spark, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, [(1, "a", "d1"), (2, "b", "d2"), (3, "c", "d3")], partitionBy="day")
    t = HiveAcidTable.forPath(spark, path)
    # Hive's INSERT OVERWRITE ... PARTITION (day='d1') SELECT id, v: no partition column in the data
    spark.createDataFrame([(9, "n")], "id int, v string").write.format("hiveacid") \
        .mode("overwrite").option("partitionSpec", "day=d1").save(path)
    assert _rows(t) == Counter([(9, "n", "d1"), (2, "b", "d2"), (3, "c", "d3")])
    # no rows at all: the partitions the condition selects become empty
    _write(spark, path, [], "overwrite", replaceWhere="day >= 'd2'")
    assert _rows(t) == Counter([(9, "n", "d1")])
    assert _rows(t, version=1) == Counter([(1, "a", "d1"), (2, "b", "d2"), (3, "c", "d3")])
    with pytest.raises(Exception, match="outside the partitions this overwrite replaces"):
        _write(spark, path, [(4, "x", "d9")], "overwrite", replaceWhere="day = 'd1'")
    assert _rows(t) == Counter([(9, "n", "d1")])


def test_truncate_drop_partitions_add_columns(spark, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, [(1, "a", "d1"), (2, "b", "d2"), (3, "c", "d3")], partitionBy="day")
    t = HiveAcidTable.forPath(spark, path)
    assert t.dropPartitions({"day": "d2"})["partitions"] == ["day=d2"]
    assert t.dropPartitions("day IN ('d3', 'd7')")["partitions"] == ["day=d3"]
    assert _rows(t) == Counter([(1, "a", "d1")])
    with pytest.raises(Exception, match="'v' is not a partition column"):
        t.dropPartitions("v = 'a'")
    with pytest.raises(Exception, match="addColumns"):
        spark.createDataFrame([(5, "e", "note", "d1")], "id int, v string, note string, day string") \
            .write.format("hiveacid").mode("append").save(path)
    t.addColumns("note string, qty int")
    spark.createDataFrame([(5, "e", "hi", 7, "d1")], "id int, v string, note string, qty int, day string") \
        .write.format("hiveacid").mode("append").save(path)
    spark.createDataFrame([(6, "f", "d1", 1.5)], "id int, v string, day string, score double") \
        .write.format("hiveacid").mode("append").option("mergeSchema", "true").save(path)
    got = sorted(tuple(r) for r in t.toDF().collect())
    assert t.toDF().columns == ["id", "v", "note", "qty", "score", "day"]
    assert got == [(1, "a", None, None, None, "d1"), (5, "e", "hi", 7, None, "d1"),
                   (6, "f", None, None, 1.5, "d1")]
    t.truncate()
    assert t.toDF().count() == 0 and t.toDF(version=5).count() == 3
    assert [r["operation"] for r in t.history().collect()] == [
        "truncate", "append", "append", "dropPartitions", "dropPartitions", "create"]


def test_restore_to_version(spark, tmp_path):
    """A random history of appends, DML and partition replacements; restoring to each recorded
    version gives that version's rows, and the versions before and after stay readable."""
    rng = random.Random(26)
    path = str(tmp_path / "t")
    _write(spark, path, [(i, f"v{i}", f"d{i % 3}") for i in range(6)], partitionBy="day")
    t = HiveAcidTable.forPath(spark, path)
    versions = {1: _rows(t)}
    next_id = 100
    for step in range(7):
        op = ["append", "delete", "update", "overwrite", "drop", "append", "update"][step]
        if op == "append":
            _write(spark, path, [(next_id, "n", f"d{rng.randrange(4)}")])
            next_id += 1
        elif op == "delete":
            t.delete(f"id % 3 = {rng.randrange(3)}")
        elif op == "update":
            t.update(f"id % 2 = {rng.randrange(2)}", set={"v": "concat(v, 'u')"})
        elif op == "overwrite":
            _write(spark, path, [(next_id, "o", "d1")], "overwrite", partitionSpec="day=d1")
            next_id += 1
        else:
            t.dropPartitions("day = 'd2'")
        versions[max(r["writeId"] for r in t.history().collect())] = _rows(t)
    latest = max(versions)
    for v in sorted(rng.sample(sorted(versions)[:-1], 3)):
        m = t.restoreToVersion(v)
        assert _rows(t) == versions[v], v
        versions[m["writeId"]] = versions[v]
    for v, rows in versions.items():  # every version, restores included, by time travel
        assert _rows(t, version=v) == rows, v
    assert m["writeId"] > latest
    ops = [r["operation"] for r in t.history().collect()][:3]
    assert ops == ["restore"] * 3
    with pytest.raises(HiveAcidError):
        t.restoreToVersion(10_000)
    # a restore to the current version changes no partition
    again = t.restoreToVersion(m["writeId"])
    assert again["partitions"] == [] and _rows(t) == versions[m["writeId"]]
