"""Streaming sink throughput (issue 16): the same rows, in batches of the same size, written as
micro-batches of ``writeStream.format("hiveacid")`` versus as one batch append per batch
(``df.write.format("hiveacid").mode("append")``), into fresh path-mode tables. Reported as the
sink's throughput relative to the batch appends, measured in the same run (interleaved reps),
and the stream's time split into its micro-batches' writes (Spark's ``addBatch``: planning,
tasks, the sink's commit) and Spark's streaming bookkeeping around them (offset and commit logs,
listing the input), from the query's progress reports.

    python -m bench.streaming [--batches 10] [--batch-rows 200000] [--reps 3] [--partitions 0]
                              [--control]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from .spark_cases import start_spark
from .timing import measure


def make_input(folder: Path, batches: int, rows: int, partitions: int) -> None:
    """``batches`` Parquet files of ``rows`` rows: id, qty, name, price (+ part)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(16)
    folder.mkdir(parents=True)
    for b in range(batches):
        ids = np.arange(b * rows, (b + 1) * rows, dtype=np.int64)
        cols = {"id": ids, "qty": rng.integers(0, 100, rows).astype(np.int32),
                "name": pa.array([f"name-{i % 10007}" for i in range(rows)]),
                "price": rng.random(rows)}
        if partitions:
            cols["part"] = pa.array((ids % partitions).astype(np.int32))
        pq.write_table(pa.table(cols), folder / f"batch-{b:04d}.parquet")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--batch-rows", type=int, default=200_000)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--control", action="store_true",
                    help="also Spark's own Parquet sink, streamed vs batch appends (same batches)")
    args = ap.parse_args(argv)
    spark = start_spark(2, shuffle_partitions=2)
    work = Path(tempfile.mkdtemp(prefix="hiveacid-bench-streaming-"))
    try:
        src = work / "input"
        make_input(src, args.batches, args.batch_rows, args.partitions)
        files = sorted(str(p) for p in src.iterdir())
        schema = spark.read.parquet(files[0]).schema
        part = ["part"] if args.partitions else []
        counter = {"n": 0}

        def fresh(kind: str) -> str:
            counter["n"] += 1
            return str(work / f"{kind}-{counter['n']}")

        def batch_appends() -> int:
            table = fresh("batch")
            for f in files:
                w = spark.read.schema(schema).parquet(f).write.format("hiveacid").mode("append")
                w = w.option("partitionBy", ",".join(part)) if part else w
                w.save(table)
            return len(files)

        def stream() -> int:
            table = fresh("stream")
            w = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(src))
                 .writeStream.format("hiveacid")
                 .option("checkpointLocation", table + "-checkpoint"))
            w = w.option("partitionBy", ",".join(part)) if part else w
            q = w.trigger(availableNow=True).start(table)
            q.awaitTermination()
            # Spark's own bookkeeping per micro-batch (offsets and commit logs, listing the
            # input) against the batch's write (addBatch: planning, tasks, our commit)
            ms = [p["durationMs"] for p in q.recentProgress if p["numInputRows"]]
            progress.append((sum(d.get("addBatch", 0) for d in ms) / 1000,
                             sum(d["triggerExecution"] - d.get("addBatch", 0) for d in ms) / 1000))
            return len(ms)

        progress: list[tuple[float, float]] = []

        def parquet_appends() -> int:  # control: Spark's own file sink, same batches
            table = fresh("pq-batch")
            for f in files:
                spark.read.schema(schema).parquet(f).write.mode("append").parquet(table)
            return len(files)

        def parquet_stream() -> int:
            table = fresh("pq-stream")
            q = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(src))
                 .writeStream.format("parquet").option("checkpointLocation", table + "-checkpoint")
                 .trigger(availableNow=True).start(table))
            q.awaitTermination()
            return len(q.recentProgress)

        cases = {"batch appends": batch_appends, "stream": stream}
        if args.control:
            cases.update({"parquet appends": parquet_appends, "parquet stream": parquet_stream})
        res = measure(cases, reps=args.reps, warmup=args.warmup,
                      log=lambda m: print(m, flush=True))
        rows = args.batches * args.batch_rows
        out = {"batches": args.batches, "batch_rows": args.batch_rows,
               "partitions": args.partitions, "reps": args.reps,
               "batch_appends_s": res["batch appends"].get("median_s"),
               "stream_s": res["stream"].get("median_s")}
        measured = progress[args.warmup:]
        if measured:
            out["stream_add_batch_s"] = round(statistics.median(a for a, _ in measured), 3)
            out["stream_engine_overhead_s"] = round(statistics.median(o for _, o in measured), 3)
        if out["batch_appends_s"] and out["stream_s"]:
            out["stream_throughput_vs_batch"] = round(out["batch_appends_s"] / out["stream_s"], 3)
            out["stream_rows_per_s"] = round(rows / out["stream_s"])
        if args.control and res["parquet stream"].get("median_s"):
            out["parquet_stream_vs_batch"] = round(
                res["parquet appends"]["median_s"] / res["parquet stream"]["median_s"], 3)
        print(json.dumps(out))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
