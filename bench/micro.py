"""Micro-benchmarks behind two lever decisions, in-process and without Spark::

    python -m bench.micro writer [--rows 2000000] [--reps 5]
    python -m bench.micro row-struct PATH [--reps 10]

``writer``: ``AcidFileWriter`` (ACID event columns, footer patch) against pyarrow's ORC writer
encoding only the data columns, same batches, ZLIB and SNAPPY: what the ACID format itself costs
on the write side. ``row-struct``: decoding an ACID file's ``row`` struct whole against naming
its fields (``row.id``, ...), as the reader does. Prints medians and ratios, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from .gen import data_files
from .timing import measure


def writer_table(rows: int) -> pa.Table:
    """The six typed columns of the Spark write benchmark, built in pyarrow."""
    ids = np.arange(rows, dtype=np.int64)
    names = pc.binary_join_element_wise("customer-", pa.array((ids % 200_000).astype(str)), "")
    amount = pa.array(ids % 1_000_000_007).cast(pa.decimal128(19, 0)) \
        .cast(pa.decimal128(18, 2), safe=False)
    return pa.table({"id": ids, "qty": (ids % 1000).astype(np.int32), "name": names,
                     "price": ids * 0.001,
                     "ts": pa.array((1_600_000_000 + ids) * 1_000_000, pa.timestamp("us")),
                     "amount": amount})


def writer(rows: int, reps: int) -> dict:
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.write.acid_file import AcidFileWriter

    table = writer_table(rows)
    batches = table.to_batches(max_chunksize=10_000)  # Spark's default Arrow batch size
    root = tempfile.mkdtemp(prefix="bench-micro-")
    fs = LocalFileSystem()

    def acid(codec: str):
        def run():
            w = AcidFileWriter(fs, os.path.join(root, f"acid_{codec}", "bucket_00000"),
                               pa.struct(list(table.schema)), compression=codec)
            for b in batches:
                w.write_inserts(b, 1, 536870912)
            w.close()
        return run

    def raw(codec: str):
        def run():
            w = po.ORCWriter(os.path.join(root, f"raw_{codec}.orc"), compression=codec.lower(),
                             batch_size=65536)
            for b in batches:
                w.write(pa.Table.from_batches([b]))
            w.close()
        return run

    try:
        res = measure({"acid ZLIB": acid("ZLIB"), "pyarrow ZLIB": raw("ZLIB"),
                       "acid SNAPPY": acid("SNAPPY"), "pyarrow SNAPPY": raw("SNAPPY")},
                      reps=reps, warmup=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = {"rows": rows, **{k: v["median_s"] for k, v in res.items()}}
    for codec in ("ZLIB", "SNAPPY"):
        out[f"acid/pyarrow {codec}"] = round(out[f"acid {codec}"] / out[f"pyarrow {codec}"], 3)
    return out


def row_struct(path: str, reps: int) -> dict:
    files = data_files(path)
    fields = [f"row.{f.name}" for f in po.ORCFile(files[0]).schema.field("row").type]

    def decode(columns):
        def run():
            for f in files:
                orc = po.ORCFile(f)
                for i in range(orc.nstripes):
                    orc.read_stripe(i, columns=columns)
        return run

    res = measure({"whole row": decode(["row"]), "named fields": decode(fields)},
                  reps=reps, warmup=1)
    out = {k: {"median_s": v["median_s"], "min_s": v["min_s"]} for k, v in res.items()}
    out["whole/named (median)"] = round(res["whole row"]["median_s"] / res["named fields"]["median_s"], 3)
    out["whole/named (min)"] = round(res["whole row"]["min_s"] / res["named fields"]["min_s"], 3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.micro")
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("writer")
    w.add_argument("--rows", type=int, default=2_000_000)
    w.add_argument("--reps", type=int, default=5)
    r = sub.add_parser("row-struct")
    r.add_argument("path")
    r.add_argument("--reps", type=int, default=10)
    args = ap.parse_args(argv)
    out = writer(args.rows, args.reps) if args.what == "writer" else row_struct(args.path, args.reps)
    for k, v in out.items():
        print(f"{k:28s} {v}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
