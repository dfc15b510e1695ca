"""Conversion benchmark: ``python -m bench.convert [--rows N] [--reps R]`` (docs/benchmarks.md).

On the reference table (10M rows; write ids: 1 base, 10 insert deltas, 20 delete deltas = 31),
in one run on the same files:

* baseline: one full scan + ``df.write.parquet`` of the visible rows (Spark, ``hiveacid``);
* convert to Delta and to Iceberg without history (one snapshot) and with history (31);
* mirror of one new write id (100k rows) vs reading that write id (the change feed, in-process).

Results are ratios against the baseline measured in the same run (the machine is shared).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from .gen import ROOT, TableParams, generate, table_meta

RESULTS = ROOT / "bench" / "results"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.convert")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    from spark_hive_acid import register, write_table
    from spark_hive_acid.conversion import convert, delta_target, iceberg_target, mirror
    from spark_hive_acid.read.changes import read_changes
    from spark_hive_acid.stream.changefeed import batch_change_feed

    params = TableParams(rows=args.rows)
    source = generate(params, log=log)
    meta = table_meta(source)
    work = Path(tempfile.mkdtemp(prefix="bench-convert-"))
    spark = (SparkSession.builder.master(f"local[{args.workers}]")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    times: dict[str, list[float]] = {}

    def record(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(round(seconds, 3))
        log(f"{name}: {seconds:.2f} s")

    def catalog(i: str) -> dict:
        return {"type": "sql", "uri": f"sqlite:///{work}/cat{i}.db",
                "warehouse": f"file://{work}/ice{i}"}

    warm = work / "warmup"  # the first Spark job starts the JVM side and the Python workers
    spark.read.format("hiveacid").load(str(source)).write.parquet(str(warm))
    shutil.rmtree(warm, ignore_errors=True)
    for rep in range(args.reps):
        out = work / f"parquet{rep}"
        record("baseline: scan + df.write.parquet", _timed(
            lambda: spark.read.format("hiveacid").load(str(source)).write.parquet(str(out)))[0])
        shutil.rmtree(out, ignore_errors=True)
        for history in (False, True):
            tag = "history" if history else "no history"
            d = work / f"delta{rep}{history}"
            record(f"delta, {tag}", _timed(lambda: convert(
                str(source), delta_target(str(d)), history=history, verify=False,
                workers=args.workers))[0])
            shutil.rmtree(d, ignore_errors=True)
            record(f"iceberg, {tag}", _timed(lambda: convert(
                str(source), iceberg_target(catalog(f"{rep}{history}"), "bench.t"),
                history=history, verify=False, workers=args.workers))[0])
    # mirror of one new write id vs reading it: a copy of the table gets one more write id
    copy = work / "mirror_source"
    shutil.copytree(source, copy)
    d = work / "delta_mirror"
    convert(str(copy), delta_target(str(d)), history=False, verify=False, workers=args.workers)
    new = pa.table({"id": pa.array(range(10**9, 10**9 + 100_000), pa.int64()),
                    "qty": pa.array([1] * 100_000, pa.int32()),
                    "name": pa.array(["n"] * 100_000), "price": pa.array([1.0] * 100_000),
                    "ts": pa.array([0] * 100_000, pa.timestamp("us")),
                    "amount": pa.array([0] * 100_000, pa.decimal128(18, 2))})
    w = write_table(new, str(copy))["writeId"]

    def read_write_id() -> int:
        fs, pairs = batch_change_feed({"path": str(copy), "readChangeFeed": "true",
                                       "startingVersion": str(w), "endingVersion": str(w)})
        return sum(b.num_rows for spec, t in pairs for b in read_changes(fs, spec, t))

    record("read one write id (change feed)", _timed(read_write_id)[0])
    seconds, done = _timed(lambda: mirror(str(copy), delta_target(str(d)), verify=False,
                                          workers=args.workers))
    assert [s["writeId"] for s in done.steps] == [w] and done.rows_written == 100_000, done.steps
    record("mirror one write id (delta)", seconds)
    spark.stop()

    median = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    base = median["baseline: scan + df.write.parquet"]
    ratios = {k: round(v / base, 2) for k, v in median.items() if not k.startswith(
        ("baseline", "read one", "mirror one"))}
    ratios["mirror one write id / reading it"] = round(
        median["mirror one write id (delta)"] / median["read one write id (change feed)"], 2)
    report = {"rows": meta["rows"], "visible_rows": meta["visible_rows"], "write_ids": 31,
              "workers": args.workers, "loadavg": os.getloadavg(), "median_s": median,
              "ratios": ratios, "times_s": times}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"convert-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(
        json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
