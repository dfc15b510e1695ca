"""Section 4: hiveacid's task reader in-process (no Spark) against pyarrow decoding the same files.

Run in a fresh subprocess per measurement so that ``ru_maxrss`` is the reader's own peak::

    python -m bench.inproc compare PATH --reps 5 --warmup 1
    python -m bench.inproc memory PATH
    python -m bench.inproc profile PATH
    python -m bench.inproc threads PATH

Prints one JSON object on its last line.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import sys
import time

import pyarrow as pa
import pyarrow.orc as po

from .gen import data_files
from .timing import measure


def plan(path: str, options: dict | None = None):
    from spark_hive_acid.catalog import open_scan

    return open_scan({"path": path, **(options or {})})


def read_with_reader(path: str, options: dict | None = None, cold: bool = True,
                     columns: list[str] | None = None) -> dict:
    """Plan and read every task sequentially; ``cold`` drops the per-process delete-set cache."""
    from spark_hive_acid.read import reader as reader_mod
    from spark_hive_acid.read.reader import TaskReader

    if cold:
        reader_mod._CACHE._sets.clear()
    scan = plan(path, options)
    cols = scan.default_columns()
    if columns is not None:
        cols = [c for c in cols if c.name in columns]
    schema = pa.schema([pa.field(c.name, c.type) for c in cols])
    r = TaskReader(scan.fs, scan.read_spec(schema))
    rows = batches = 0
    max_batch = 0
    for t in scan.tasks():
        for b in r.read(t):
            rows += b.num_rows
            batches += 1
            max_batch = max(max_batch, b.num_rows)
    return {"rows_out": rows, "batches": batches, "max_batch_rows": max_batch}


def read_raw(path: str, columns=("row",)) -> dict:
    """pyarrow's ORC reader on the same data files, stripe by stripe, no filtering."""
    rows = 0
    for f in data_files(path):
        orc = po.ORCFile(f)
        for i in range(orc.nstripes):
            rows += orc.read_stripe(i, columns=list(columns) if columns else None).num_rows
    return {"rows_in": rows}


def read_deletes_only(path: str) -> dict:
    """Loading the delete files and building the delete-event set, as a reader task does."""
    from spark_hive_acid.read import reader as reader_mod

    reader_mod._CACHE._sets.clear()
    scan = plan(path)
    n = 0
    seen = set()
    for s in scan.plan.slices:
        key = tuple(d.path for d in s.deletes)
        if key in seen or not s.deletes:
            continue
        seen.add(key)
        n += len(reader_mod.delete_set_for(scan.fs, s, scan.write_ids))
    return {"events": n}


def cmd_compare(args) -> dict:
    res = measure({
        "raw_pyarrow_row": lambda: read_raw(args.path),
        "raw_pyarrow_all_columns": lambda: read_raw(args.path, columns=None),
        "reader_cold": lambda: read_with_reader(args.path, cold=True),
        "reader_warm": lambda: read_with_reader(args.path, cold=False),
        "delete_set_load_build": lambda: read_deletes_only(args.path),
        "plan_only": lambda: len(plan(args.path).tasks()),
    }, reps=args.reps, warmup=args.warmup, log=lambda m: print(m, file=sys.stderr))
    return res


def cmd_threads(args) -> dict:
    """pyarrow's CPU / IO pool sizes (the ORC decode itself is single-threaded per stripe)."""
    cpu0, io0 = pa.cpu_count(), pa.io_thread_count()
    cases = {}
    for n in (1, 2, 4):
        def run(n=n):
            pa.set_cpu_count(n)
            pa.set_io_thread_count(n)
            try:
                return read_with_reader(args.path, cold=True)
            finally:
                pa.set_cpu_count(cpu0)
                pa.set_io_thread_count(io0)
        cases[f"reader_threads_{n}"] = run
    return measure(cases, reps=args.reps, warmup=args.warmup,
                   log=lambda m: print(m, file=sys.stderr))


def cmd_memory(args) -> dict:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    out = read_with_reader(args.path, cold=True)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    out["maxrss_before_bytes"] = before
    out["maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def cmd_profile(args) -> dict:
    read_with_reader(args.path, cold=True)  # warm the page cache and imports
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    read_with_reader(args.path, cold=True)
    prof.disable()
    total = time.perf_counter() - t0
    st = pstats.Stats(prof)
    rows = []
    for (file, line, func), (cc, nc, tt, ct, _callers) in st.stats.items():
        rows.append({"function": f"{file.split('site-packages/')[-1].split('/work/main/')[-1]}:{line}({func})",
                     "calls": nc, "tottime_s": round(tt, 4), "cumtime_s": round(ct, 4)})
    rows.sort(key=lambda r: -r["tottime_s"])
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
    return {"total_s": round(total, 3), "top_tottime": rows[:25],
            "top_cumtime": sorted(rows, key=lambda r: -r["cumtime_s"])[:25],
            "text": text.getvalue()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.inproc")
    ap.add_argument("mode", choices=["compare", "memory", "profile", "threads"])
    ap.add_argument("path")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args(argv)
    out = {"compare": cmd_compare, "memory": cmd_memory, "profile": cmd_profile,
           "threads": cmd_threads}[args.mode](args)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
