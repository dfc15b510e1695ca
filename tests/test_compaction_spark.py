"""The table API of compaction through Spark: compact (units as Spark tasks), compactIfNeeded
with Hive's Initiator rules and a per-table override, vacuum."""
from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered

pytestmark = pytest.mark.spark
SCHEMA = "id long, v string, p int"


def _row_ids(spark, path):
    df = spark.read.format("hiveacid").option("includeRowId", "true").load(path)
    return Counter((tuple(r.row__id), r.id, r.v, r.p) for r in df.collect())


def test_compact_vacuum_and_compact_if_needed(spark, tmp_path):
    ensure_registered(spark)
    path = str(tmp_path / "t")
    model = {}
    props = json.dumps({"compactorthreshold.hive.compactor.delta.num.threshold": "6"})
    for k in range(4):  # 4 appends by 2 tasks each, into 2 partitions
        rows = [(i, f"v{i}", i % 2) for i in range(k * 10, k * 10 + 10)]
        spark.createDataFrame(rows, SCHEMA).repartition(2).write.format("hiveacid") \
            .mode("append").option("partitionBy", "p").option("tableProperties", props).save(path)
        model.update({r[0]: r for r in rows})
    t = HiveAcidTable.forPath(spark, path)
    t.delete("id % 7 = 0")
    t.update("id = 11", set={"v": "'eleven'"})
    model = {i: r for i, r in model.items() if i % 7}
    model[11] = (11, "eleven", 1)
    before = _row_ids(spark, path)

    # Initiator: p=0 has 5 delta directories, p=1 7 (the update's two), no base; the table's
    # threshold is 6 (Hive: more than 6), so only p=1 is compacted, and major (no base)
    got = t.compactIfNeeded()
    by_part = {d["partition"]: d for d in got["decisions"]}
    assert (by_part["p=0"]["deltas"], by_part["p=1"]["deltas"]) == (5, 7)
    assert (by_part["p=0"]["decision"], by_part["p=1"]["decision"]) == (None, "major")
    assert got["minor"] is None and got["major"]["partitions"] == ["p=1"]
    assert _row_ids(spark, path) == before

    m = t.compact("minor", partitions=[{"p": 0}])
    assert m["partitions"] == ["p=0"] and m["kind"] == "minor"
    assert (m["dirsBefore"], m["dirsAfter"]) == (5, 2)
    assert _row_ids(spark, path) == before

    m = t.compact("major")
    assert m["partitions"] == ["p=0"]  # p=1 is one base already
    assert _row_ids(spark, path) == before
    assert Counter((r.id, r.v, r.p) for r in t.toDF().collect()) == Counter(model.values())
    for p in ("p=0", "p=1"):
        files = os.listdir(f"{path}/{p}/" + max(n for n in os.listdir(f"{path}/{p}")
                                                 if n.startswith("base_")))
        assert {"_metadata_acid", "_orc_acid_version", "bucket_00000", "bucket_00001"} == set(files)

    dry = t.vacuum(retentionHours=0, dryRun=True)
    assert dry["numRemoved"] > 0 and all(os.path.exists(p) for p in dry["removed"])
    assert t.vacuum(retentionHours=1)["numRemoved"] == 0  # all within the retention
    done = t.vacuum(retentionHours=0)
    assert sorted(done["removed"]) == sorted(dry["removed"])
    assert not any(os.path.exists(p) for p in done["removed"])
    assert sorted(os.listdir(f"{path}/p=0")) == [n for n in sorted(os.listdir(f"{path}/p=0"))
                                                 if n.startswith("base_")]
    assert _row_ids(spark, path) == before


class _DyingContext:
    """Runs units like UnitContext, but its Spark task kills its own Python worker (SIGKILL)."""

    def __init__(self, ctx):
        self.ctx = ctx

    def run(self, unit):
        import signal
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_compaction_task_leaves_the_table_as_before(spark, tmp_path):
    """kill -9 of the Python worker running a compaction task: the job fails, the compaction is
    aborted and leaves nothing (staging removed, no new directory), the next one succeeds."""
    import sys

    from pyspark import cloudpickle

    from spark_hive_acid.spark.compaction import spark_runner

    ensure_registered(spark)
    path = str(tmp_path / "t")
    for k in range(3):
        spark.createDataFrame([(i, f"v{i}", i % 2) for i in range(k * 5, k * 5 + 5)], SCHEMA) \
            .write.format("hiveacid").mode("append").save(path)
    t = HiveAcidTable.forPath(spark, path)
    before, dirs = _row_ids(spark, path), sorted(os.listdir(path))
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        run = spark_runner(spark)
        with pytest.raises(Exception):
            from spark_hive_acid.compaction.runner import compact
            compact(t._ref, "major", run_units=lambda units, ctx: run(units, _DyingContext(ctx)))
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert sorted(os.listdir(path)) == dirs and _row_ids(spark, path) == before
    assert not os.path.exists(os.path.join(path, "_hiveacid_staging"))
    assert t.history().first().state == "aborted"
    assert t.compact("major")["partitionsCompacted"] == 1 and _row_ids(spark, path) == before


_DRIVER = r"""
import os, signal, sys
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.spark.compaction import spark_runner
run = spark_runner(spark)

def run_then_die(units, ctx):
    run(units, ctx)  # the Spark tasks wrote every output file
    os.killpg(os.getpgid(0), signal.SIGKILL)  # the driver (and its JVM) die before the commit

compact(PathTable(sys.argv[1], {"txnTimeoutSeconds": "1"}), "major", run_units=run_then_die)
"""


def test_a_killed_compaction_driver_leaves_the_table_as_before(spark, tmp_path):
    """kill -9 of a Spark driver (Python and JVM) after its compaction tasks wrote their files,
    before the commit: nothing visible changes, the dead compaction's write id is aborted as
    stale by the next writer, which removes its staging, and the next compaction succeeds."""
    import signal
    import subprocess
    import sys

    ensure_registered(spark)
    path = str(tmp_path / "t")
    for k in range(3):
        spark.createDataFrame([(i, f"v{i}", i % 2) for i in range(k * 5, k * 5 + 5)], SCHEMA) \
            .write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    before, dirs = _row_ids(spark, path), sorted(os.listdir(path))
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    proc = subprocess.run([sys.executable, str(script), path], start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    staging = os.path.join(path, "_hiveacid_staging")
    assert any(n.endswith("-compaction") for n in os.listdir(staging))  # its files, staged
    assert sorted(os.listdir(path)) == sorted(dirs + ["_hiveacid_staging"])
    assert _row_ids(spark, path) == before
    t = HiveAcidTable.forPath(spark, path)
    assert t.history().first().state == "open"
    m = t.compact("major")  # begins by aborting the stale write id and removing its staging
    assert m["partitionsCompacted"] == 2 and _row_ids(spark, path) == before
    assert not os.path.exists(staging)
    assert [r.state for r in t.history().collect()][:2] == ["committed", "aborted"]


def test_a_big_output_file_is_written_by_several_spark_tasks(spark, tmp_path, monkeypatch):
    """One writer id, so one ``bucket_00000``: with the segment threshold lowered, its major
    compaction runs as one Spark task per core, joined into that one file."""
    from spark_hive_acid.compaction import segments

    ensure_registered(spark)
    path = str(tmp_path / "t")
    for k in range(3):
        rows = [(i, f"v{i}", 0) for i in range(k * 10, k * 10 + 10)]
        spark.createDataFrame(rows, SCHEMA).coalesce(1).write.format("hiveacid") \
            .mode("append").save(path)
    t = HiveAcidTable.forPath(spark, path)
    t.delete("id % 3 = 0")
    before = _row_ids(spark, path)
    joined = []
    concat = segments.concat_acid_files
    monkeypatch.setattr(segments, "SEGMENT_MIN_BYTES", 1)
    monkeypatch.setattr(segments, "concat_acid_files",
                        lambda fs, srcs, target: joined.append(len(srcs)) or concat(fs, srcs, target))
    m = t.compact("major")
    assert joined == [spark.sparkContext.defaultParallelism] and joined[0] >= 2
    assert m["filesAfter"] == 1 and m["rowsWritten"] == len(before)
    assert sorted(os.listdir(f"{path}/{m['outputs'][0]}")) == [
        "_metadata_acid", "_orc_acid_version", "bucket_00000"]
    assert _row_ids(spark, path) == before
