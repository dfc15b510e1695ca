"""Object stores (issue 22): the reference table read from an S3 server against the same read from
local disk in the same run, requests per file, planning a 10,000-partition table with the
listing in parallel against a sequential listing, appends, and all of it again behind injected
latency (what the loopback server hides)::

    python -m bench.object_store                       # 10M-row reference table, 10k partitions
    python -m bench.object_store --rows 1000000 --partitions 2000 --reps 2   # a quick run
    python -m bench.object_store --latency 0.02        # round-trip time injected (default 20 ms)

The S3 server is moto on 127.0.0.1 (``tests/s3_server``, needs the ``test`` extra); latency is
added by a TCP proxy in front of it that holds every answer back (``tests/s3_server/proxy.py``).
Results go to ``bench/results/object_store-<stamp>.json``; a table is printed.
"""
from __future__ import annotations

import argparse
import functools
import io
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po

from .gen import DATA_DIR, ROOT, TableParams, data_files, delete_files, generate, table_meta
from .inproc import read_with_reader
from .timing import measure

sys.path.insert(0, str(ROOT / "tests"))
RESULTS = ROOT / "bench" / "results"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def upload_dir(client, bucket: str, local: Path, prefix: str, threads: int = 16) -> int:
    files = [f for f in local.rglob("*") if f.is_file() and not f.name.startswith("_bench")]

    def put(f: Path) -> None:
        client.upload_file(str(f), bucket, f"{prefix}/{f.relative_to(local).as_posix()}")

    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(put, files))
    return len(files)


def many_partitions(client, bucket: str, prefix: str, n: int, threads: int = 16) -> None:
    """A table of ``n`` partitions ``p=0..n-1``, each one delta of one small ACID file (the
    files are the same bytes: the partition's value lives in the directory name)."""
    from spark_hive_acid.acid.layout import TableLayout
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.write.acid_file import AcidFileWriter
    from spark_hive_acid.write.schema import row_type_of

    layout = TableLayout(columns=[("id", "bigint")], partition_columns=[("p", "int")])
    tmp = DATA_DIR / "many_partitions_file.orc"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    w = AcidFileWriter(LocalFileSystem(), str(tmp), row_type_of(layout))
    w.write_inserts(pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"]), 1,
                    536870912)
    w.close()
    body = tmp.read_bytes()
    client.put_object(Bucket=bucket, Key=f"{prefix}/_hiveacid_table.json",
                      Body=layout.to_json().encode())
    delta = "delta_0000001_0000001_0000"

    def put(i: int) -> None:
        client.put_object(Bucket=bucket, Key=f"{prefix}/p={i}/{delta}/bucket_00000", Body=body)
        client.put_object(Bucket=bucket, Key=f"{prefix}/p={i}/{delta}/_orc_acid_version",
                          Body=b"2")

    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(put, range(n)))


@contextmanager
def sequential_listing():
    """Every listing one directory after another (the baseline of the parallel listing)."""
    from spark_hive_acid.acid import partition_tree
    from spark_hive_acid.io import parallel
    from spark_hive_acid.read import listing

    orig = parallel.list_dirs_parallel
    one = functools.partial(_one_worker, orig)
    saved = (partition_tree.list_dirs_parallel, listing.list_dirs_parallel)
    partition_tree.list_dirs_parallel = listing.list_dirs_parallel = one
    try:
        yield
    finally:
        partition_tree.list_dirs_parallel, listing.list_dirs_parallel = saved


def _one_worker(orig, fs, paths, max_workers=16, **kw):
    return orig(fs, paths, 1, **kw)


def plan_time(uri: str, options: dict) -> dict:
    from spark_hive_acid.catalog import open_scan

    t0 = time.perf_counter()
    scan = open_scan({"path": uri, **options})
    n = len(scan.plan.partitions)
    return {"partitions": n, "seconds": time.perf_counter() - t0}


def requests_of(server, mark: int, prefix: str) -> dict:
    reqs = [r for r in server.requests_since(mark) if f"/{prefix}" in r.path or
            f"prefix={prefix}" in r.path]
    lists = [r for r in reqs if "list-type=2" in r.path]
    return {"total": len(reqs), "list": len(lists), "head": sum(r.method == "HEAD" for r in reqs),
            "get": sum(r.method == "GET" for r in reqs) - len(lists),
            "put": sum(r.method in ("PUT", "POST") for r in reqs),
            "delete": sum(r.method == "DELETE" for r in reqs)}


def scan_section(server, endpoint: str, bucket: str, local: Path, prefix: str,
                 reps: int, warmup: int, label: str) -> dict:
    from s3_server.server import ACCESS_KEY, SECRET_KEY

    opts = {"fs.s3a.endpoint": endpoint, "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY, "fs.s3a.path.style.access": "true"}
    uri = f"s3a://{bucket}/{prefix}"
    log(f"{label}: full scans, local disk vs S3 ({reps} reps)")
    res = measure({"local": lambda: read_with_reader(str(local))["rows_out"],
                   "s3": lambda: read_with_reader(uri, opts)["rows_out"]},
                  reps=reps, warmup=warmup, log=log)
    mark = server.log_mark()
    read_with_reader(uri, opts)
    req = requests_of(server, mark, prefix)
    files = len(data_files(local)) + len(delete_files(local))
    return {"scan": res, "requests": req, "files": files,
            "requests_per_file": round((req["head"] + req["get"]) / files, 2),
            "ratio_s3_vs_local": res["s3"]["median_s"] / res["local"]["median_s"]}


def planning_section(endpoint: str, bucket: str, prefix: str, reps: int, label: str) -> dict:
    from s3_server.server import ACCESS_KEY, SECRET_KEY

    opts = {"fs.s3a.endpoint": endpoint, "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY, "fs.s3a.path.style.access": "true"}
    uri = f"s3a://{bucket}/{prefix}"
    log(f"{label}: planning {prefix}, parallel vs sequential listing ({reps} reps)")

    def sequential():
        with sequential_listing():
            return plan_time(uri, opts)["partitions"]

    res = measure({"parallel": lambda: plan_time(uri, opts)["partitions"],
                   "sequential": sequential}, reps=reps, warmup=0, log=log)
    return {"planning": res,
            "speedup": res["sequential"]["median_s"] / res["parallel"]["median_s"]}


def write_section(server, endpoint: str, bucket: str, rows: int, reps: int, label: str,
                  tmp: Path) -> dict:
    from s3_server.server import ACCESS_KEY, SECRET_KEY
    from spark_hive_acid import write_table

    from .gen import row_chunk

    opts = {"fs.s3a.endpoint": endpoint, "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY, "fs.s3a.path.style.access": "true"}
    data = pa.Table.from_struct_array(row_chunk(0, rows, 1))
    data = data.append_column("p", pa.array([i % 4 for i in range(rows)], pa.int32()))
    uri = f"s3a://{bucket}/writes-{label}"
    local = tmp / f"writes-{label}"
    write_table(data.slice(0, 10), uri, partition_by=["p"], options=opts)
    write_table(data.slice(0, 10), str(local), partition_by=["p"])
    log(f"{label}: appends of {rows} rows into 4 partitions ({reps} reps)")
    res = measure({"local": lambda: write_table(data, str(local))["numInsertedRows"],
                   "s3": lambda: write_table(data, uri, options=opts)["numInsertedRows"]},
                  reps=reps, warmup=0, log=log)
    mark = server.log_mark()
    write_table(data.slice(0, 100), uri, options=opts)
    return {"append": res, "requests_per_append": requests_of(server, mark, f"writes-{label}"),
            "ratio_s3_vs_local": res["s3"]["median_s"] / res["local"]["median_s"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the reference table")
    ap.add_argument("--partitions", type=int, default=10_000, help="of the planning table")
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per answer, injected")
    ap.add_argument("--latency-partitions", type=int, default=2_000,
                    help="partitions planned behind the injected latency (sequential listing "
                         "costs 2 round trips a partition)")
    ap.add_argument("--write-rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--planning-reps", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args(argv)

    from s3_server.proxy import FaultProxy
    from s3_server.server import S3Server

    p = TableParams(rows=args.rows)
    local = generate(p, log=log)
    meta = table_meta(local)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = ROOT / ".build" / "bench-s3" / stamp
    out: dict = {"params": vars(args), "table": meta, "stamp": stamp}
    with S3Server(work / "server") as server:
        import boto3

        from s3_server.server import ACCESS_KEY, SECRET_KEY

        c = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                         aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
        bucket = "bench"
        c.create_bucket(Bucket=bucket)
        t0 = time.perf_counter()
        files = upload_dir(c, bucket, local, "reference")
        log(f"uploaded {files} files in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        many_partitions(c, bucket, "many", args.partitions)
        if args.latency_partitions < args.partitions:
            many_partitions(c, bucket, "some", args.latency_partitions)
        log(f"made the {args.partitions}-partition table in {time.perf_counter() - t0:.1f} s")
        few = "some" if args.latency_partitions < args.partitions else "many"
        out["loopback"] = {
            "scan": scan_section(server, server.endpoint, bucket, local, "reference", args.reps,
                                 args.warmup, "loopback"),
            "planning": planning_section(server.endpoint, bucket, "many", args.planning_reps,
                                         "loopback"),
            "writes": write_section(server, server.endpoint, bucket, args.write_rows, args.reps,
                                    "loopback", work)}
        with FaultProxy(server.port, latency=args.latency) as proxy:
            out["latency"] = {
                "seconds_per_answer": args.latency,
                "scan": scan_section(server, proxy.endpoint, bucket, local, "reference",
                                     args.reps, args.warmup, "latency"),
                "planning": planning_section(proxy.endpoint, bucket, few, args.planning_reps,
                                             "latency"),
                "writes": write_section(server, proxy.endpoint, bucket, args.write_rows,
                                        max(1, args.reps - 1), "latency", work)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"object_store-{stamp}.json"
    path.write_text(json.dumps(out, indent=1, default=str))
    print(markdown(out))
    log(f"results: {path}")
    return 0


def markdown(out: dict) -> str:
    buf = io.StringIO()
    for mode in ("loopback", "latency"):
        r = out.get(mode)
        if not r:
            continue
        title = "127.0.0.1" if mode == "loopback" else \
            f"127.0.0.1 + {r['seconds_per_answer'] * 1000:.0f} ms per answer"
        sc, pl, wr = r["scan"], r["planning"], r["writes"]
        buf.write(f"\n### {title}\n\n| measurement | local disk | S3 | S3 / local |\n"
                  "|---|---:|---:|---:|\n")
        s = sc["scan"]
        buf.write(f"| full scan, median s | {s['local']['median_s']:.2f} | "
                  f"{s['s3']['median_s']:.2f} | {sc['ratio_s3_vs_local']:.2f}x |\n")
        a = wr["append"]
        buf.write(f"| append of {out['params']['write_rows']:,} rows (4 partitions), median s | "
                  f"{a['local']['median_s']:.2f} | {a['s3']['median_s']:.2f} | "
                  f"{wr['ratio_s3_vs_local']:.2f}x |\n")
        q = sc["requests"]
        buf.write(f"\nScan requests: {q['head']} HEAD + {q['get']} GET for {sc['files']} data "
                  f"files ({sc['requests_per_file']} a file), {q['list']} listings. "
                  f"A 100-row append: {wr['requests_per_append']}.\n")
        pp = pl["planning"]
        n = pp["parallel"].get("result")
        buf.write(f"\nPlanning {n:,} partitions: parallel listing "
                  f"{pp['parallel']['median_s']:.2f} s, sequential "
                  f"{pp['sequential']['median_s']:.2f} s ({pl['speedup']:.1f}x).\n")
    return buf.getvalue()


if __name__ == "__main__":
    raise SystemExit(main())
