"""Crashed writers, concurrent writers from several processes, and concurrent Spark appends."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading

import pyarrow as pa
import pytest

from spark_hive_acid.txn import pathlog as txnlog
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.publish import publish
from spark_hive_acid.write.task_writer import TableSpec
from spark_hive_acid.write.task_writer import InsertTarget, InsertWriter

LAYOUT = TableLayout(columns=[("id", "bigint"), ("name", "string")], partition_columns=[("p", "int")])


def _stage_rows(fs, table, txn, ids, task=0):
    spec = TableSpec.of(table, LAYOUT)
    w = InsertWriter(fs, spec, InsertTarget(txn.write_id),
                     f"{txnlog.staging_dir(fs, table, txn.write_id)}/t{task}", task)
    data = pa.record_batch([pa.array(ids, pa.int64()), pa.array([f"n{i}" for i in ids])],
                           names=["id", "name"])
    w.write(data, [pa.array([i % 4 for i in ids], pa.int32())])
    return spec, w.close()


def _writer_killed_after_publish(table: str, timeout_s: float) -> None:
    fs = LocalFileSystem()
    txn = txnlog.begin(fs, table, "append", timeout_s=timeout_s)
    spec, files = _stage_rows(fs, table, txn, list(range(100, 140)))
    publish(fs, spec, txn, files)  # directories are in the table, the commit record is not
    os.kill(os.getpid(), signal.SIGKILL)


def _append(table: str, ids: list[int]) -> None:
    fs = LocalFileSystem()
    txn = txnlog.begin(fs, table, "append")
    spec, files = _stage_rows(fs, table, txn, ids)
    commit_write(fs, spec, txn, files)


@pytest.fixture
def table(tmp_path, fs):
    t = str(tmp_path / "t")
    fs.mkdirs(t)
    save_layout(fs, t, LAYOUT)
    _append(t, list(range(10)))
    return t


def _ids(t):
    return sorted(read_table(t).column("id").to_pylist())


def test_killed_writer_leaves_nothing_visible(table, fs):
    ctx = mp.get_context("fork")
    p = ctx.Process(target=_writer_killed_after_publish, args=(table, 0.5))
    p.start()
    p.join(60)
    assert p.exitcode == -signal.SIGKILL
    # its directories are in place, for 4 partitions, but invisible: write id 2 is open
    assert any("delta_0000002" in d for _, dirs, _ in os.walk(table) for d in dirs)
    assert _ids(table) == list(range(10))
    assert txnlog.read_snapshot(fs, table).is_open(2)
    # the next writer succeeds (and, once the dead writer's timeout passed, cleans it up)
    import time
    time.sleep(0.6)
    _append(table, [50, 51])
    assert _ids(table) == list(range(10)) + [50, 51]
    assert txnlog.read_snapshot(fs, table).is_aborted(2)
    assert not any("delta_0000002" in d for _, dirs, _ in os.walk(table) for d in dirs)


def test_parallel_appends_from_processes(table, fs):
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_append, args=(table, list(range(1000 * k, 1000 * k + 50))))
             for k in range(1, 5)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert _ids(table) == sorted(list(range(10)) + [i for k in range(1, 5) for i in range(1000 * k, 1000 * k + 50)])
    assert sorted(h["writeId"] for h in txnlog.history(fs, table)) == [1, 2, 3, 4, 5]


@pytest.mark.spark
def test_concurrent_spark_appends_both_succeed(acid_spark, tmp_path):
    path = str(tmp_path / "t")
    acid_spark.createDataFrame([(0, "z")], "id long, name string").write.format("hiveacid") \
        .mode("append").save(path)
    errors = []

    def run(k):
        try:
            acid_spark.createDataFrame([(k * 10 + i, "x") for i in range(5)], "id long, name string") \
                .write.format("hiveacid").mode("append").save(path)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in (1, 2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    assert not errors
    ids = sorted(r.id for r in acid_spark.read.format("hiveacid").load(path).collect())
    assert ids == [0] + list(range(10, 15)) + list(range(20, 25))


_DRIVER = r"""
import os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
from spark_hive_acid.spark.table import ensure_registered
ensure_registered(spark)
df = spark.range(0, 50_000_000, numPartitions=4).selectExpr(
    "id", "concat('n', id) as name", "cast(id % 4 as int) as p")
df.write.format("hiveacid").mode("append").save(sys.argv[1])
"""


@pytest.mark.spark
def test_killed_spark_driver_leaves_table_readable(acid_spark, tmp_path, fs):
    """A Spark driver killed in the middle of an append: nothing becomes visible, the next write
    works, and the dead write id is aborted and cleaned once its timeout passed."""
    import subprocess
    import sys
    import time
    path = str(tmp_path / "t")
    acid_spark.createDataFrame([(1, "a", 1)], "id long, name string, p int").write \
        .format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), path], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    staging = os.path.join(path, txnlog.STAGING_DIR, f"{2:019d}")
    try:
        deadline = time.time() + 240
        while time.time() < deadline:  # wait until its tasks are writing files
            if os.path.isdir(staging) and any(files for _, _, files in os.walk(staging)):
                break
            assert proc.poll() is None, "the driver ended before it was killed"
            time.sleep(0.2)
        else:
            pytest.fail("the driver never started writing")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    rows = [tuple(r) for r in acid_spark.read.format("hiveacid").load(path).collect()]
    assert rows == [(1, "a", 1)]
    assert txnlog.read_snapshot(fs, path).is_open(2)
    acid_spark.createDataFrame([(2, "b", 2)], "id long, name string, p int").write \
        .format("hiveacid").mode("append").save(path)
    assert sorted(r.id for r in acid_spark.read.format("hiveacid").load(path).collect()) == [1, 2]
    assert txnlog.abort_stale(fs, path, timeout_s=0) == [2]
    assert not os.path.exists(staging)
