"""Peak memory of one write task that writes many partitions, and of one DML task that writes
many delete events (issue 13 item 13).

Each measurement runs in a fresh process and reports its peak RSS. Inserts (``write_table``: the
task writer Spark's tasks use, in process): the task writer as it ships; without holding rows back
(files opened and evicted as rows arrive, within the open-file cap); and as it was before both
(every partition's file open at once). Deletes (``DeleteWriter``, as a DML task uses it): events
streamed from sorted input, as shipped, against collecting them all and sorting on close.

    python -m bench.partition_memory [--partitions 2000] [--rows 400000] [--deletes 16000000]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile


MODES = {"shipped": {}, "no-holding": {"FLUSH_KEY_BYTES": 1},
         "before": {"FLUSH_KEY_BYTES": 1, "MAX_OPEN_FILES": 1 << 30}}
DELETE_MODES = {"deletes-streamed": True, "deletes-collected": False}


def _delete_child(events: int, sorted_input: bool) -> None:
    import numpy as np
    import pyarrow as pa

    from spark_hive_acid.acid import bucket_codec
    from spark_hive_acid.acid.layout import TableLayout, save_layout
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.write.task_writer import DeleteWriter, TableSpec

    fs = LocalFileSystem()
    with tempfile.TemporaryDirectory() as d:
        layout = TableLayout(columns=[("id", "bigint")], partition_columns=[("p", "int")])
        save_layout(fs, d, layout)
        w = DeleteWriter(fs, TableSpec.of(d, layout), 9, 0, f"{d}/_hiveacid_staging/x",
                         sorted_input=sorted_input)
        bp = np.full(1 << 20, bucket_codec.encode(0), np.int32)
        part = pa.array(np.ones(1 << 20, np.int32))
        for lo in range(0, events, 1 << 20):  # one (partition, writer id) group, in key order
            n = min(1 << 20, events - lo)
            w.write(np.full(n, 1, np.int64), bp[:n], np.arange(lo, lo + n, dtype=np.int64),
                    [part.slice(0, n)])
        w.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": round(peak_mb, 1)}))


def _child(partitions: int, rows: int, mode: str) -> None:
    import numpy as np
    import pyarrow as pa

    from spark_hive_acid import write_table
    from spark_hive_acid.write import task_writer

    for name, value in MODES[mode].items():
        setattr(task_writer, name, value)
    rng = np.random.default_rng(7)

    def batches():
        for lo in range(0, rows, 20_000):  # every batch touches every partition
            n = min(20_000, rows - lo)
            yield pa.record_batch(
                [pa.array(np.arange(lo, lo + n)), pa.array(rng.random(n)),
                 pa.array([f"s{i % 997}" for i in range(n)]),
                 pa.array(rng.integers(0, partitions, n).astype(np.int32))],
                names=["id", "x", "s", "p"])

    with tempfile.TemporaryDirectory() as d:
        write_table(batches(), f"{d}/t", partition_by=["p"])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "peak_mb": round(peak_mb, 1)}))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--deletes", type=int, default=16_000_000)
    ap.add_argument("--child", choices=sorted(MODES) + sorted(DELETE_MODES),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child in DELETE_MODES:
        _delete_child(args.deletes, DELETE_MODES[args.child])
        return
    if args.child is not None:
        _child(args.partitions, args.rows, args.child)
        return
    results = {}
    for mode in list(MODES) + list(DELETE_MODES):
        out = subprocess.run([sys.executable, "-m", "bench.partition_memory", "--partitions",
                              str(args.partitions), "--rows", str(args.rows), "--deletes",
                              str(args.deletes), "--child", mode],
                             check=True, capture_output=True, text=True)
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]
    before = results["before"]
    print(f"{args.partitions} partitions, {args.rows} rows, one task, peak RSS: "
          + "; ".join(f"{m} {results[m]} MB ({results[m] / before:.2f}x before)" for m in MODES))
    print(f"{args.deletes} delete events of one group, one task, peak RSS: "
          + "; ".join(f"{m} {results[m]} MB" for m in DELETE_MODES))


if __name__ == "__main__":
    main()
