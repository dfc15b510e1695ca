"""Each PySpark internal that ``spark_hive_acid.spark._compat`` relies on, exercised for real: when
a PySpark upgrade breaks one, its test fails here, loudly, instead of a feature degrading quietly."""
from __future__ import annotations

import json
import os
import sys

import pyarrow as pa
import pytest
from pyspark import cloudpickle
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    DataSource, DataSourceReader, DataSourceStreamArrowWriter, InputPartition, WriterCommitMessage,
)

from spark_hive_acid.spark import _compat

pytestmark = pytest.mark.spark
# Spark's Python workers cannot import this test module: ship its classes by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class _ProbeSource(DataSource):
    """Reports, as its one row, what ``pushdown_enabled()`` said while Spark planned the read."""

    @classmethod
    def name(cls):
        return "hiveacid_compat_probe"

    def schema(self):
        return "pushdown boolean"

    def reader(self, schema):
        return _ProbeReader(_compat.pushdown_enabled())


class _ProbeReader(DataSourceReader):
    def __init__(self, seen: bool):
        self.seen = seen

    def partitions(self):
        return [InputPartition(0)]

    def read(self, partition):
        yield (self.seen,)


@pytest.fixture(scope="module")
def probe(spark):
    spark.dataSource.register(_ProbeSource)
    return spark


@pytest.mark.parametrize("enabled", [True, False])
def test_pushdown_enabled_reads_the_planning_workers_setting(probe, enabled):
    key = "spark.sql.python.filterPushdown.enabled"
    before = probe.conf.get(key, "false")
    probe.conf.set(key, str(enabled).lower())
    try:
        rows = probe.read.format("hiveacid_compat_probe").load().collect()
    finally:
        probe.conf.set(key, before)
    assert [r.pushdown for r in rows] == [enabled]


def test_map_in_arrow_without_pandas(spark):
    def double(batches):
        import pyarrow.compute as pc

        for b in batches:
            yield pa.RecordBatch.from_arrays([pc.multiply(b.column(0), 2)], names=["x"])

    df = spark.range(5).withColumnRenamed("id", "x")
    out = _compat.map_in_arrow(df, double, "x long")
    assert sorted(r.x for r in out.collect()) == [0, 2, 4, 6, 8]


def test_plan_references_names_the_columns_an_expression_reads(spark):
    df = spark.createDataFrame([(1, "a", 2.0)], "a int, b string, c double")
    assert _compat.plan_references(df, [F.col("a") > 1], [F.upper("b")]) == {"a", "b"}
    assert _compat.plan_references(df, [F.expr("c = 1")], []) == {"c"}
    assert _compat.plan_references(df, [F.expr("nope = 1")], []) is None  # does not analyse


def test_spark_worker_and_driver_process_are_recognised(spark):
    driver_jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()

    def probe(batches):
        from spark_hive_acid.spark._compat import driver_process, in_spark_worker

        for _ in batches:
            pid, start = driver_process()
            yield pa.RecordBatch.from_pylist(
                [{"worker": in_spark_worker(), "pid": pid, "known": start is not None}])

    rows = _compat.map_in_arrow(spark.range(1).coalesce(1), probe,
                                "worker boolean, pid long, known boolean").collect()
    assert [(r.worker, r.pid, r.known) for r in rows] == [(True, driver_jvm, True)]
    assert not _compat.in_spark_worker()  # this test process is not a Spark worker
    assert _compat.driver_process()[0] == os.getpid()


def test_a_spark_session_keeps_the_mark(spark):
    other = spark.newSession()  # a fresh session object, unmarked
    assert not _compat.session_marked(other)
    _compat.mark_session(other)
    assert _compat.session_marked(other) and not _compat.session_marked(spark.newSession())


def test_the_jvm_says_which_data_sources_a_session_knows(spark):
    """``pyspark_hiveacid`` is found statically (so HiveAcidTable need not register it again and
    Spark does not WARN about replacing it); an unknown name is not."""
    fresh = spark.newSession()
    assert _compat.data_source_exists(fresh, "hiveacid") is True
    assert _compat.data_source_exists(fresh, "no_such_format_xyz") is False


def test_a_library_error_comes_back_from_sparks_error_text(spark, tmp_path):
    from spark_hive_acid.exceptions import TableNotFoundError

    with pytest.raises(Exception) as e:
        spark.read.format("hiveacid").load(str(tmp_path / "missing")).collect()
    err = _compat.library_error(e.value)
    assert isinstance(err, TableNotFoundError) and str(tmp_path / "missing") in str(err)
    with pytest.raises(TableNotFoundError):
        with _compat.library_errors():
            spark.read.format("hiveacid").load(str(tmp_path / "missing"))
    assert _compat.library_error(ValueError("plain")) is None
class _StreamProbe(DataSource):
    """A streaming sink writing what the probes say to the file named by option ``out``: where
    ``streamWriter`` ran (the commit worker or not) and what each task knew of its batch."""

    @classmethod
    def name(cls):
        return "hiveacid_stream_probe"

    def streamWriter(self, schema, overwrite):
        return _StreamProbeWriter(self.options["out"], _compat.in_stream_commit_worker())


class _StreamProbeMessage(WriterCommitMessage):
    def __init__(self, seen):
        self.seen = seen


class _StreamProbeWriter(DataSourceStreamArrowWriter):
    def __init__(self, out, in_commit_worker):
        self.out, self.in_commit_worker = out, in_commit_worker

    def _note(self, record):
        with open(self.out, "a") as f:
            f.write(json.dumps(record) + "\n")

    def write(self, iterator):
        for _ in iterator:
            pass
        return _StreamProbeMessage(list(_compat.stream_batch_of_task()) + [self.in_commit_worker])

    def commit(self, messages, batchId):
        self._note({"batch": batchId, "commit_worker": self.in_commit_worker,
                    "tasks": [m.seen for m in messages]})


def test_stream_commit_worker_and_task_batch_are_recognised(spark, tmp_path):
    spark.dataSource.register(_StreamProbe)
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text('{"x": 1}\n')
    out = tmp_path / "probe.jsonl"
    q = (spark.readStream.schema("x int").json(str(src)).writeStream.format("hiveacid_stream_probe")
         .option("out", str(out)).option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(availableNow=True).start())
    q.awaitTermination()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    # the planning-time writer (the one the tasks got) was not built in the commit worker
    assert records == [{"batch": 0, "commit_worker": True, "tasks": [[q.id, 0, False]]}]
    assert not _compat.in_stream_commit_worker() and _compat.stream_batch_of_task() == (None, None)
