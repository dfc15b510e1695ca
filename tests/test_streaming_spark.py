"""Streaming through Spark (one shared session, short availableNow queries): the source with
admission control and a restart from its checkpoint, the sink into a bucketed table that Hive 2.3
reads, and the change feed as a batch read and as a stream, after a real DELETE and UPDATE."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from spark_hive_acid.direct import write_table

pytestmark = pytest.mark.spark


def _append(path, ids):
    write_table(pa.table({"id": pa.array(ids, pa.int64()),
                          "name": pa.array([f"n{i}" for i in ids])}), str(path))


def _run(spark, path, ckpt, **options):
    """An availableNow query from the table; returns [(start, end, sorted rows)] per batch."""
    got = []
    reader = spark.readStream.format("hiveacid")
    for k, v in options.items():
        reader = reader.option(k, str(v))

    def collect(df, batch_id):
        got.append(sorted(tuple(r) for r in df.collect()))

    q = (reader.load(str(path)).writeStream.foreachBatch(collect)
         .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start())
    q.awaitTermination()
    offsets = [(json.loads(p["sources"][0]["startOffset"] or "null"),
                json.loads(p["sources"][0]["endOffset"])) for p in q.recentProgress
               if p["numInputRows"] or p["sources"][0]["startOffset"] != p["sources"][0]["endOffset"]]
    return got, offsets


def test_source_snapshot_then_new_write_ids_and_restart(spark, tmp_path):
    table, ckpt = tmp_path / "t", tmp_path / "ckpt"
    _append(table, [0, 1])
    _append(table, [2])
    got, _ = _run(spark, table, ckpt)
    assert got == [[(0, "n0"), (1, "n1"), (2, "n2")]]  # the snapshot first
    for ids in ([3], [4, 5], [6]):
        _append(table, ids)
    got, offsets = _run(spark, table, ckpt, maxWriteIdsPerTrigger=2)  # restart: the checkpoint
    assert got == [[(3, "n3"), (4, "n4"), (5, "n5")], [(6, "n6")]]
    assert [(s["writeId"], e["writeId"]) for s, e in offsets] == [(2, 4), (4, 5)]


@pytest.mark.hive
def test_sink_into_a_bucketed_table_hive_reads(spark, tmp_path, hive_ref):  # noqa: F811
    src, table = tmp_path / "in", tmp_path / "t"
    src.mkdir()
    for f in range(3):
        (src / f"f{f}.json").write_text("".join(json.dumps({"id": f * 10 + i, "name": f"x{i}"})
                                                + "\n" for i in range(5)))
    q = (spark.readStream.schema("id BIGINT, name STRING").option("maxFilesPerTrigger", 1)
         .json(str(src)).writeStream.format("hiveacid")
         .option("bucketBy", "id").option("numBuckets", "2")
         .option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(availableNow=True).start(str(table)))
    q.awaitTermination()
    want = sorted((f * 10 + i, f"x{i}") for f in range(3) for i in range(5))
    got = spark.read.format("hiveacid").load(str(table)).collect()
    assert sorted(tuple(r) for r in got) == want
    assert sorted(p.name for p in table.iterdir() if p.name.startswith("delta_")) == \
        ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000", "delta_0000003_0000003_0000"]
    hive = hive_ref.read(table, [("id", "bigint"), ("name", "string")], bucket_count=2)
    assert sorted(v for _, v in hive) == want


def _history_with_dml(spark, table):
    """Write ids: 1 insert 1-3, 2 DELETE id 1, 3 UPDATE id 2, 4 insert 4 (real Spark DML)."""
    from pyspark.sql import functions as F

    from spark_hive_acid import HiveAcidTable

    _append(table, [1, 2, 3])
    t = HiveAcidTable.forPath(spark, str(table))
    t.delete("id = 1")
    t.update("id = 2", {"name": F.lit("two")})
    _append(table, [4])


def test_change_feed_batch_after_delete_and_update(spark, tmp_path):
    table = tmp_path / "t"
    _history_with_dml(spark, table)
    feed = (spark.read.format("hiveacid").option("readChangeFeed", "true")
            .option("startingVersion", 2).load(str(table)))
    assert feed.columns == ["id", "name", "_change_type", "_commit_version", "_commit_timestamp"]
    rows = sorted((r.id, r.name, r._change_type, r._commit_version) for r in feed.collect())
    assert rows == [(1, "n1", "delete", 2), (2, "n2", "update_preimage", 3),
                    (2, "two", "update_postimage", 3), (4, "n4", "insert", 4)]
    assert feed.filter("_commit_timestamp is null").count() == 0


def test_change_feed_stream_after_delete_and_update(spark, tmp_path):
    table = tmp_path / "t"
    _history_with_dml(spark, table)
    got, offsets = _run(spark, table, tmp_path / "ckpt", readChangeFeed="true", startingVersion=3)
    assert sorted(r[:4] for b in got for r in b) == [
        (2, "n2", "update_preimage", 3), (2, "two", "update_postimage", 3), (4, "n4", "insert", 4)]
    assert [e["writeId"] for _, e in offsets] == [3, 4]  # the UPDATE alone in its micro-batch
