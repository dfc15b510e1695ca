"""df.write.format("hiveacid"): append, overwrite, partitions, buckets, schema checks, failures."""
from __future__ import annotations

import json
import os

import pyarrow.orc as po
import pytest

from spark_hive_acid.acid import bucket_codec
from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.acid.bucketing import bucket_ids
from spark_hive_acid.acid.layout import load_layout

pytestmark = pytest.mark.spark


def _read(spark, path):
    return sorted(tuple(r) for r in spark.read.format("hiveacid").load(path).collect())


def _df(spark, ids, part_mod=3):
    return spark.createDataFrame([(i, f"n{i}", i % part_mod) for i in ids], "id long, name string, p int")


def _dirs(path):
    out = []
    for root, dirs, files in os.walk(path):
        rel = os.path.relpath(root, path)
        if rel.startswith("_"):
            continue
        out += [os.path.join(rel, d) for d in dirs if d.startswith(("base_", "delta_", "delete_"))]
    return sorted(out)


def test_append_creates_table_and_appends(acid_spark, tmp_path, fs):
    path = str(tmp_path / "t")
    _df(acid_spark, range(6)).write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    _df(acid_spark, range(6, 9)).write.format("hiveacid").mode("append").save(path)
    assert _read(acid_spark, path) == [(i, f"n{i}", i % 3) for i in range(9)]
    layout = load_layout(fs, path)
    assert layout.columns == [("id", "bigint"), ("name", "string")]
    assert layout.partition_columns == [("p", "int")]
    assert layout.properties["transactional"] == "true"
    assert _dirs(path) == [f"p={p}/delta_000000{w}_000000{w}_0000" for p in range(3) for w in (1, 2)]
    assert [h["operation"] for h in txnlog.history(fs, path)] == ["append", "create"]
    assert not (tmp_path / "t" / txnlog.STAGING_DIR).exists()  # no empty staging left


def test_overwrite_static_and_dynamic(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    _df(acid_spark, range(9)).write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    # dynamic: only partition p=1 is replaced
    acid_spark.createDataFrame([(100, "x", 1)], "id long, name string, p int").write.format("hiveacid") \
        .mode("overwrite").option("partitionOverwriteMode", "dynamic").save(path)
    assert _read(acid_spark, path) == sorted([(i, f"n{i}", i % 3) for i in range(9) if i % 3 != 1]
                                             + [(100, "x", 1)])
    # static (default): the whole table is replaced; untouched partitions get an empty base
    acid_spark.createDataFrame([(7, "y", 2)], "id long, name string, p int").write.format("hiveacid") \
        .mode("overwrite").save(path)
    assert _read(acid_spark, path) == [(7, "y", 2)]
    assert "p=0/base_0000003" in _dirs(path) and "p=1/base_0000003" in _dirs(path)
    assert sorted(os.listdir(tmp_path / "t" / "p=0" / "base_0000003")) == ["_orc_acid_version", "bucket_00000"]


def test_overwrite_with_no_rows_unpartitioned(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    _df(acid_spark, range(3)).write.format("hiveacid").mode("append").save(path)
    _df(acid_spark, []).write.format("hiveacid").mode("overwrite").save(path)
    assert _read(acid_spark, path) == []
    base = tmp_path / "t" / "base_0000002"
    assert "bucket_00000" in os.listdir(base)  # never an empty base directory


def test_bucketed_table_routes_by_hive_hash(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    df = _df(acid_spark, range(40)).repartition(3)
    df.write.format("hiveacid").mode("append").option("bucketBy", "id").option("numBuckets", "4") \
        .option("compression", "SNAPPY").option("tableProperties", '{"owner": "me"}').save(path)
    assert _read(acid_spark, path) == [(i, f"n{i}", i % 3) for i in range(40)]
    seen = 0
    for rel in _dirs(path):
        stmt = int(rel.rsplit("_", 1)[1])
        for name in os.listdir(os.path.join(path, rel)):
            if not name.startswith("bucket_"):
                continue
            n = int(name.split("_")[1])
            orc = po.ORCFile(os.path.join(path, rel, name))
            assert orc.compression == "SNAPPY"
            t = orc.read()
            ids = t.column("row").combine_chunks().field("id")
            assert set(bucket_ids([ids], ["bigint"], 4, 2).tolist()) == {n}
            assert set(t.column("bucket").to_pylist()) == {bucket_codec.encode(n, stmt)}
            seen += t.num_rows
    assert seen == 40
    layout = json.loads((tmp_path / "t" / "_hiveacid_table.json").read_text())
    assert layout["num_buckets"] == 4 and layout["properties"]["owner"] == "me"
    # an overwrite from several tasks still leaves one file per bucket
    _df(acid_spark, range(20)).repartition(3).write.format("hiveacid").mode("overwrite").save(path)
    base = sorted(n for n in os.listdir(tmp_path / "t" / "base_0000002") if n.startswith("bucket_"))
    assert base == [f"bucket_{n:05d}" for n in range(4)]
    assert _read(acid_spark, path) == [(i, f"n{i}", i % 3) for i in range(20)]


def test_schema_checks(acid_spark, tmp_path, fs):
    path = str(tmp_path / "t")
    _df(acid_spark, range(3)).write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    before = _dirs(path)
    bad = [
        (acid_spark.createDataFrame([(1, 1)], "id long, p int"), "missing column.*name"),
        (acid_spark.createDataFrame([(1, "a", 1, 2.0)], "id long, name string, p int, extra double"),
         "not in the table: extra"),
        (acid_spark.createDataFrame([("x", "a", 1)], "id string, name string, p int"), "incompatible.*id"),
    ]
    for df, msg in bad:
        with pytest.raises(Exception, match=msg):
            df.write.format("hiveacid").mode("append").save(path)
    assert _dirs(path) == before
    assert [h["writeId"] for h in txnlog.history(fs, path)] == [1]  # nothing allocated
    # safe widening int -> bigint, columns in another order and case
    acid_spark.createDataFrame([(1, 5, "w")], "P int, ID int, name string") \
        .write.format("hiveacid").mode("append").save(path)
    assert (5, "w", 1) in _read(acid_spark, path)


def test_refuses_non_acid_directory(acid_spark, tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "data.csv").write_text("1,2\n")
    with pytest.raises(Exception, match="not a Hive ACID table"):
        _df(acid_spark, range(2)).write.format("hiveacid").mode("append").save(str(tmp_path / "plain"))
    assert os.listdir(tmp_path / "plain") == ["data.csv"]


def test_invalid_options(acid_spark, tmp_path):
    for key, value, msg in [("numBuckets", "4", "bucketBy"), ("compression", "gzip", "compression"),
                            ("partitionOverwriteMode", "odd", "partitionOverwriteMode")]:
        with pytest.raises(Exception, match=msg):
            _df(acid_spark, range(2)).write.format("hiveacid").mode("append").option(key, value) \
                .save(str(tmp_path / key))


def test_failing_task_leaves_table_unchanged(acid_spark, tmp_path, fs):
    path = str(tmp_path / "t")
    _df(acid_spark, range(5)).write.format("hiveacid").mode("append").save(path)
    bad = acid_spark.range(0, 30000, numPartitions=2).selectExpr(
        "id", "if(id = 25000, raise_error('boom'), concat('n', id)) as name", "cast(0 as int) as p")
    with pytest.raises(Exception, match="boom"):
        bad.write.format("hiveacid").mode("append").save(path)
    assert _read(acid_spark, path) == [(i, f"n{i}", i % 3) for i in range(5)]
    hist = txnlog.history(fs, path)
    assert hist[0]["state"] == "aborted"
    # the task still running when the job was aborted removed what it staged after the abort
    assert not (tmp_path / "t" / txnlog.STAGING_DIR).exists()
    _df(acid_spark, [9]).write.format("hiveacid").mode("append").save(path)
    assert len(_read(acid_spark, path)) == 6


def test_retried_attempt_does_not_duplicate(tmp_path, monkeypatch):
    """Two attempts of one task staged files; commit uses only the message Spark reports."""
    import pyarrow as pa
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    import pyspark
    from spark_hive_acid.direct import read_table
    from spark_hive_acid.spark.writer import create_writer

    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    path = str(tmp_path / "t")
    writer = create_writer({"path": path}, schema, False)

    class Ctx:
        def __init__(self, attempt):
            self.attempt = attempt

        def partitionId(self):
            return 0

        def taskAttemptId(self):
            return self.attempt

    batch = pa.record_batch([pa.array([1, 2], pa.int64()), pa.array(["a", "b"])], names=["id", "name"])
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: Ctx(11)))
    writer.write(iter([batch]))  # the first attempt "failed" after writing its files
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: Ctx(12)))
    msg = writer.write(iter([batch]))
    writer.commit([msg])
    assert sorted(read_table(path).column("id").to_pylist()) == [1, 2]


def test_types_round_trip(acid_spark, tmp_path):
    import datetime as dt
    from decimal import Decimal
    path = str(tmp_path / "t")
    schema = ("b boolean, t tinyint, s smallint, i int, l long, f float, d double, "
              "dec decimal(10,2), str string, bin binary, day date, ts timestamp_ntz, "
              "arr array<int>, m map<string,int>, st struct<x:int,y:string>, part date")
    row = (True, 1, 2, 3, 4, 1.5, 2.5, Decimal("12.34"), "é", b"\x00\x01", dt.date(1500, 3, 1),
           dt.datetime(2024, 5, 6, 7, 8, 9, 123456), [1, 2], {"k": 1}, (5, "y"), dt.date(2024, 1, 2))
    empty = (None,) * 15 + (dt.date(2024, 1, 2),)
    acid_spark.createDataFrame([row, empty], schema).write.format("hiveacid").mode("append") \
        .option("partitionBy", "part").save(path)
    got = acid_spark.read.format("hiveacid").load(path)
    rows = sorted(got.collect(), key=lambda r: r.b is None)
    assert tuple(rows[0])[:15] == row[:15]
    assert tuple(rows[1])[:15] == (None,) * 15
    assert str(rows[0].part) == "2024-01-02"


def test_appends_to_a_table_hive_wrote(acid_spark, tmp_path, fs):
    import pyarrow as pa
    from spark_hive_acid.write.acid_file import AcidFileWriter, write_acid_version_file
    from spark_hive_acid.spark.table import HiveAcidTable
    path = tmp_path / "hive_t"
    delta = path / "delta_0000005_0000005_0000"
    w = AcidFileWriter(fs, str(delta / "bucket_00000"), pa.struct([("id", pa.int64()), ("name", pa.string())]))
    w.write_inserts(pa.record_batch([pa.array([1, 2], pa.int64()), pa.array(["a", "b"])],
                                    names=["id", "name"]), 5, bucket_codec.encode(0))
    w.close()
    write_acid_version_file(fs, str(delta))
    acid_spark.createDataFrame([(3, "c")], "id long, name string").write.format("hiveacid") \
        .mode("append").save(str(path))
    assert txnlog.history(fs, str(path))[0]["writeId"] == 6
    assert _read(acid_spark, str(path)) == [(1, "a"), (2, "b"), (3, "c")]
    HiveAcidTable.forPath(acid_spark, str(path)).delete("id = 1")
    assert _read(acid_spark, str(path)) == [(2, "b"), (3, "c")]
