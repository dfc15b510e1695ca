"""The Spark-side measurements: hiveacid scans, Spark's ORC reader raw and anti-joined, writes."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .gen import ROOT, data_files, delete_files, link_copy
from .memory import WorkerRssSampler
from .timing import Elapsed, measure

KEYS = ["originalTransaction", "bucket", "rowId"]
SCRATCH = ROOT / ".build" / "bench-scratch"


def start_spark(cores: int = 2, driver_memory: str = "4g", shuffle_partitions: int | None = None):
    """local[cores] with the venv's Python as worker and ``bench`` importable by the workers."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    pp = os.environ.get("PYTHONPATH", "")
    if str(ROOT) not in pp.split(os.pathsep):
        os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + pp if pp else "")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(f"local[{cores}]")
             .appName("spark-hive-acid-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", driver_memory)
             .config("spark.sql.warehouse.dir", str(ROOT / ".build" / "spark-warehouse")))
    if shuffle_partitions:
        spark = spark.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    spark = spark.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def agg_exprs():
    """An aggregate that touches every data column."""
    from pyspark.sql import functions as F

    return [F.count(F.lit(1)).alias("n"), F.sum("id").alias("s_id"), F.sum("qty").alias("s_qty"),
            F.sum(F.length("name")).alias("s_name_len"), F.sum("price").alias("s_price"),
            F.max("ts").alias("max_ts"), F.sum("amount").alias("s_amount")]


def _row(df):
    r = df.collect()[0]
    return {k: (str(v) if v is not None and not isinstance(v, (int, float)) else v)
            for k, v in r.asDict().items()}


def partition_columns(path) -> list[str]:
    """Names of the ``k=v`` directories between the table root and the ACID directories."""
    first = Path(data_files(path)[0]).relative_to(path)
    return [part.split("=", 1)[0] for part in first.parts[:-2] if "=" in part]


class SparkBench:
    def __init__(self, spark, log=print):
        self.spark = spark
        self.log = log
        self.orc_impl = None
        self.orc_native_error = None

    # --- readers -----------------------------------------------------------------------------
    def hiveacid(self, path: str, **options):
        return self.spark.read.format("hiveacid").options(**options).load(str(path))

    def table_count(self, path: str) -> int:
        from spark_hive_acid.spark.table import HiveAcidTable

        return HiveAcidTable.forPath(self.spark, str(path)).count()

    def choose_orc_impl(self, path: str) -> str:
        """Spark's default native ORC reader fails on ACID files; fall back to the Hive one."""
        if self.orc_impl:
            return self.orc_impl
        from pyspark.sql import functions as F

        self.spark.conf.set("spark.sql.orc.impl", "native")
        sc = self.spark.sparkContext
        sc.setLogLevel("OFF")  # the expected failure logs a long executor stack trace
        try:
            self.spark.read.orc(data_files(path)[:1]).select("row.*").agg(F.sum("id")).collect()
            self.orc_impl = "native"
        except Exception as e:  # noqa: BLE001
            msg = str(e)
            cause = [line.strip() for line in msg.splitlines() if "Exception" in line]
            self.orc_native_error = (cause[-1] if cause else msg.splitlines()[0])[:400]
            self.spark.conf.set("spark.sql.orc.impl", "hive")
            self.spark.read.orc(data_files(path)[:1]).select("row.*").agg(F.sum("id")).collect()
            self.orc_impl = "hive"
        finally:
            sc.setLogLevel("ERROR")
        self.log(f"Spark ORC reader: spark.sql.orc.impl={self.orc_impl}"
                 + (f" (native failed: {self.orc_native_error})" if self.orc_native_error else ""))
        return self.orc_impl

    def raw_orc(self, path: str):
        # basePath: Spark discovers the partition columns (``p=3``) from the directories
        return self.spark.read.option("basePath", str(path)).orc(data_files(path))

    def anti_join(self, path: str):
        """Delete events only apply within their own partition: (partition, writeId, bucket, rowId)."""
        keys = KEYS + partition_columns(path)
        data = self.raw_orc(path).select(*keys, "row.*")
        if not delete_files(path):  # nothing deleted: the pipeline is the raw scan
            return data.drop(*keys)
        dels = self.spark.read.option("basePath", str(path)).orc(delete_files(path)).select(*keys)
        return data.join(dels, keys, "left_anti").drop(*keys)

    def join_strategy(self, path: str) -> str:
        plan = self.anti_join(path).agg(*agg_exprs())._jdf.queryExecution().executedPlan().toString()
        for name in ("BroadcastHashJoin", "SortMergeJoin", "ShuffledHashJoin", "BroadcastNestedLoopJoin"):
            if name in plan:
                return name
        return "unknown"

    # --- sections ----------------------------------------------------------------------------
    SCAN_CASES = ("hiveacid_count", "hiveacid_count_columns", "hiveacid_count_table", "hiveacid_agg",
                  "orc_raw_count", "orc_raw_agg", "antijoin_count", "antijoin_agg")

    def scans(self, path: str, reps: int, warmup: int, names=SCAN_CASES) -> dict:
        """Sections 1-3 on the same files, interleaved."""
        self.choose_orc_impl(path)
        all_cases = {
            "hiveacid_count": lambda: self.hiveacid(path).count(),
            # the documented workaround for the missing column pruning: name the columns to read
            "hiveacid_count_columns": lambda: self.hiveacid(path, columns="id").count(),
            # HiveAcidTable.count(): option countRows, each task returns one number
            "hiveacid_count_table": lambda: self.table_count(path),
            "hiveacid_agg": lambda: _row(self.hiveacid(path).agg(*agg_exprs())),
            "orc_raw_count": lambda: self.raw_orc(path).count(),
            "orc_raw_agg": lambda: _row(self.raw_orc(path).select("row.*").agg(*agg_exprs())),
            "antijoin_count": lambda: self.anti_join(path).count(),
            "antijoin_agg": lambda: _row(self.anti_join(path).agg(*agg_exprs())),
        }
        return measure({n: all_cases[n] for n in names}, reps=reps, warmup=warmup, log=self.log)

    def worker_memory(self, path: str) -> dict:
        """Peak RSS of any one Python worker during a hiveacid aggregate (ps-style sampling)."""
        with WorkerRssSampler() as s:
            _row(self.hiveacid(path).agg(*agg_exprs()))
        return {"peak_worker_rss_bytes": s.peak, "workers_seen": len(s.workers_seen)}

    def levers(self, path: str, reps: int, warmup: int) -> dict:
        """splitSize, batch size, filter pushdown: each against the default in the same run."""
        from pyspark.sql import functions as F

        out = {}
        cases = {"default": lambda: _row(self.hiveacid(path).agg(*agg_exprs()))}
        for mb in (16, 32, 64, 256):
            cases[f"splitSize_{mb}MB"] = (lambda mb=mb: _row(
                self.hiveacid(path, splitSize=str(mb << 20)).agg(*agg_exprs())))
        out["splitSize"] = measure(cases, reps=reps, warmup=warmup, log=self.log)
        out["splitSize"]["_tasks"] = {
            name: self.hiveacid(path, **({"splitSize": str(int(name.split("_")[1][:-2]) << 20)}
                                         if name != "default" else {})).rdd.getNumPartitions()
            for name in cases}

        from .batched import BatchedHiveAcidSource

        self.spark.dataSource.register(BatchedHiveAcidSource)
        cases = {"per_stripe (default)": lambda: _row(self.hiveacid(path).agg(*agg_exprs()))}
        for rows in (10_000, 100_000, 1_000_000):
            cases[f"batch_{rows}"] = (lambda rows=rows: _row(
                self.spark.read.format("hiveacid_bench_batch").option("benchBatchRows", str(rows))
                .load(str(path)).agg(*agg_exprs())))
        out["batch_rows"] = measure(cases, reps=reps, warmup=warmup, log=self.log)

        key = "spark.sql.python.filterPushdown.enabled"
        before = self.spark.conf.get(key, "false")

        def selective(enabled: bool):
            self.spark.conf.set(key, "true" if enabled else "false")
            try:
                return _row(self.hiveacid(path).filter(F.col("qty") < 10).agg(*agg_exprs()))
            finally:
                self.spark.conf.set(key, before)
        out["filterPushdown"] = measure(
            {"qty<10 pushdown off": lambda: selective(False),
             "qty<10 pushdown on": lambda: selective(True)},
            reps=reps, warmup=warmup, log=self.log)
        return out

    # --- writes ------------------------------------------------------------------------------
    def write_df(self, rows: int):
        from pyspark.sql import functions as F

        return self.spark.range(rows).select(
            F.col("id"),
            (F.col("id") % 1000).cast("int").alias("qty"),
            F.concat(F.lit("customer-"), (F.col("id") % 200000).cast("string")).alias("name"),
            (F.col("id") * 0.001).alias("price"),
            F.timestamp_seconds(F.lit(1_600_000_000) + F.col("id")).alias("ts"),
            ((F.col("id") % 1000000007) / 100).cast("decimal(18,2)").alias("amount"))

    def writes(self, rows: int, reps: int, warmup: int) -> dict:
        out: dict = {"rows": rows}
        root = Path(tempfile.mkdtemp(prefix="writes-", dir=_scratch()))
        try:
            df = self.write_df(rows)

            def orc():  # Spark's default codec: snappy
                df.write.mode("overwrite").orc(str(root / "orc"))

            def orc_zlib():
                df.write.mode("overwrite").option("compression", "zlib").orc(str(root / "orc_zlib"))

            def acid():  # Hive's default codec: ZLIB
                df.write.format("hiveacid").mode("append").save(str(root / "acid"))

            def python_sink():  # the floor of any Python data source write: no encoding
                df.write.format(NULL_FORMAT).mode("append").save()

            def acid_snappy():
                df.write.format("hiveacid").mode("append").option("compression", "SNAPPY") \
                    .save(str(root / "acid_snappy"))

            try:
                acid()  # the probe: create the table (and fail fast if there is no writer)
            except Exception as e:  # noqa: BLE001
                out["error"] = _writer_error(e)
                self.log(f"writer not available: {out['error']}")
                out["orc"] = measure({"df.write.orc": orc}, reps=reps, warmup=warmup, log=self.log)
                return out
            from .null_sink import FORMAT as NULL_FORMAT, NullSinkSource

            self.spark.dataSource.register(NullSinkSource)
            out.update(measure({"df.write.orc": orc, "hiveacid_append": acid,
                                "df.write.orc_zlib": orc_zlib, "hiveacid_append_snappy": acid_snappy,
                                "python_sink_floor": python_sink},
                               reps=reps, warmup=warmup, log=self.log))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return out

    def dml_shuffle_lever(self, path: str, reps: int, warmup: int) -> dict:
        """DELETE 1% with the session's spark.sql.shuffle.partitions against 4 (the DML writer
        repartitions to exactly that many Python tasks)."""
        key = "spark.sql.shuffle.partitions"
        before = self.spark.conf.get(key)
        out = {}
        for n in dict.fromkeys([before, "4"]):
            self.spark.conf.set(key, n)
            try:
                out[f"delete_1pct shuffle.partitions={n}"] = self.dml(
                    path, reps, warmup, ops=("delete_1pct",)).get("delete_1pct")
            finally:
                self.spark.conf.set(key, before)
        return out

    def dml(self, path: str, reps: int, warmup: int, ops=("delete_1pct", "update_1pct")) -> dict:
        """DELETE / UPDATE of 1% of rows, each on a fresh hard-linked copy of the table."""
        out: dict = {}
        try:
            from spark_hive_acid.spark.table import HiveAcidTable
        except Exception as e:  # noqa: BLE001
            out["error"] = _writer_error(e)
            self.log(f"writer not available: {out['error']}")
            return out
        root = Path(tempfile.mkdtemp(prefix="dml-", dir=_scratch()))
        copies = iter(range(10**6))

        def fresh() -> str:
            return str(link_copy(Path(path), root / f"t{next(copies)}"))

        def timed(op):
            """Copying is not part of the measurement: time only the DML call."""
            def run():
                p = fresh()
                t0 = time.perf_counter()
                op(HiveAcidTable.forPath(self.spark, p))
                dt = time.perf_counter() - t0
                shutil.rmtree(p, ignore_errors=True)
                return Elapsed(dt)
            return run

        cases = {"delete_1pct": timed(lambda t: t.delete("id % 100 = 7")),
                 "update_1pct": timed(lambda t: t.update("id % 100 = 7", set={"qty": "qty + 1"}))}
        cases = {k: v for k, v in cases.items() if k in ops}
        try:
            res = measure(cases, reps=reps, warmup=warmup, log=self.log)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        for name, rec in res.items():
            if "error" in rec:
                out[name] = {"error": "writer not available: " + rec["error"]}
                self.log(f"{name}: writer not available: {rec['error']}")
                continue
            out[name] = rec
        return out


def _writer_error(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def _scratch() -> Path:
    SCRATCH.mkdir(parents=True, exist_ok=True)
    return SCRATCH
