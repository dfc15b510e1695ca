"""Compaction benchmark: ``python -m bench.compaction [--rows N] [--small-deltas 100]``.

On the reference layout (a base + 10 insert deltas, 10% deleted over 20 delete deltas, local[2]),
in one run: major compaction against its baseline (one full hiveacid scan + ``df.write.orc`` of
the live rows), the scan after it against the scan before it, the peak RSS of a Python worker
while it compacts; and a minor compaction of ``--small-deltas`` small deltas against reading them.
Ratios only (the machine is shared); results in ``bench/results/compaction.json``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from .gen import ROOT, TableParams, generate, link_copy
from .memory import WorkerRssSampler


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--small-deltas", type=int, default=100)
    ap.add_argument("--small-rows", type=int, default=1000)
    args = ap.parse_args(argv)

    from spark_hive_acid import write_table
    from spark_hive_acid.spark.table import HiveAcidTable, ensure_registered

    from .spark_cases import agg_exprs, start_spark

    spark = start_spark(2, shuffle_partitions=2)
    ensure_registered(spark)
    work = Path(tempfile.mkdtemp(prefix="bench-compaction-", dir=ROOT / ".build"))
    out: dict = {"rows": args.rows}
    try:
        src = generate(TableParams(rows=args.rows), log=print)
        path = str(link_copy(src, work / "t"))

        def scan():  # an aggregate over every column, as the reference scans
            spark.read.format("hiveacid").load(path).agg(*agg_exprs()).collect()

        def baseline(codec=None):
            dst = str(work / f"orc-{time.time_ns()}")
            w = spark.read.format("hiveacid").load(path).write
            (w.option("compression", codec) if codec else w).orc(dst)
            shutil.rmtree(dst)

        scan()  # warm-up
        out["scan_before_s"] = min(_timed(scan) for _ in range(2))
        out["baseline_scan_write_orc_s"] = _timed(baseline)  # Spark's default codec (snappy)
        # the table's codec (ZLIB, Hive's default), which the compacted base is written with
        out["baseline_scan_write_orc_zlib_s"] = _timed(lambda: baseline("zlib"))
        t = HiveAcidTable.forPath(spark, path)
        with WorkerRssSampler() as s:
            t0 = time.perf_counter()
            out["major_metrics"] = t.compact("major")
            out["major_s"] = time.perf_counter() - t0
        out["major_peak_worker_rss_bytes"] = s.peak
        out["scan_after_s"] = min(_timed(scan) for _ in range(2))
        # the compacted base is one file: the planner cuts it at splitSize (128 MB) into a big
        # and a small task; split at half its size, both cores read
        half = str(out["major_metrics"]["bytesAfter"] // 2 + 1)
        out["scan_after_split_half_s"] = min(_timed(lambda: spark.read.format("hiveacid").option(
            "splitSize", half).load(path).agg(*agg_exprs()).collect()) for _ in range(2))
        out["tasks_after"] = spark.read.format("hiveacid").load(path).rdd.getNumPartitions()
        out["tasks_after_split_half"] = spark.read.format("hiveacid").option(
            "splitSize", half).load(path).rdd.getNumPartitions()
        out["major_vs_baseline"] = out["major_s"] / out["baseline_scan_write_orc_s"]
        out["major_vs_baseline_same_codec"] = out["major_s"] / out["baseline_scan_write_orc_zlib_s"]
        out["scan_speedup_after_major"] = out["scan_before_s"] / out["scan_after_s"]
        out["scan_speedup_after_major_split_half"] = (out["scan_before_s"]
                                                      / out["scan_after_split_half_s"])

        small = str(work / "small")
        for k in range(args.small_deltas):
            n = args.small_rows
            write_table(pa.table({"id": pa.array(range(k * n, (k + 1) * n), pa.int64()),
                                  "v": pa.array([f"v{i}" for i in range(n)])}), small)

        def read_small():
            spark.read.format("hiveacid").load(small).selectExpr("sum(hash(id, v))").collect()

        read_small()
        out["read_small_deltas_s"] = min(_timed(read_small) for _ in range(2))
        t0 = time.perf_counter()
        out["minor_metrics"] = HiveAcidTable.forPath(spark, small).compact("minor")
        out["minor_s"] = time.perf_counter() - t0
        out["minor_vs_read"] = out["minor_s"] / out["read_small_deltas_s"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    res = ROOT / "bench" / "results"
    res.mkdir(parents=True, exist_ok=True)
    (res / "compaction.json").write_text(json.dumps(out, indent=2, default=str))
    for k in ("major_vs_baseline", "major_vs_baseline_same_codec", "scan_speedup_after_major",
              "scan_speedup_after_major_split_half", "tasks_after", "tasks_after_split_half",
              "major_peak_worker_rss_bytes", "minor_vs_read"):
        print(f"{k}: {out[k]}")
    return out


if __name__ == "__main__":
    main()
