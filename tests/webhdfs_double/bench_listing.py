"""Benchmark: listing N partition directories over WebHDFS, sequentially vs list_dirs_parallel.

Run from the repository root::

    .venv/bin/python -m webhdfs_double.bench_listing --partitions 1000 --latency 0.002

(``PYTHONPATH=tests`` is needed when ``tests`` is not on the path.) The double runs in a child
process (so that it does not share the client's interpreter lock) and sleeps ``latency`` seconds
before answering each request, standing in for a NameNode round trip on a real network.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time

from webhdfs_double import WebHdfsDouble
from webhdfs_double.server import make_tree


def _serve(root: str, partitions: int, latency: float, urls, stop) -> None:
    with WebHdfsDouble(root, latency=latency) as srv:
        make_tree(srv, {f"/t/ds={i:05d}/bucket_00000": b"x" for i in range(partitions)})
        urls.put(srv.url)
        stop.wait()


def run(partitions: int, latency: float, workers: list[int], repeat: int) -> list[tuple[str, float]]:
    from spark_hive_acid.io.parallel import list_dirs_parallel
    from spark_hive_acid.io.webhdfs import WebHdfsFileSystem

    ctx = mp.get_context("spawn")
    urls, stop = ctx.Queue(), ctx.Event()
    with tempfile.TemporaryDirectory() as root:
        server = ctx.Process(target=_serve, args=(root, partitions, latency, urls, stop), daemon=True)
        server.start()
        try:
            rows = _measure(WebHdfsFileSystem(urls.get(timeout=60), user="bench"), workers, repeat,
                            list_dirs_parallel)
        finally:
            stop.set()
            server.join(timeout=10)
    return rows


def _measure(fs, workers: list[int], repeat: int, list_dirs_parallel) -> list[tuple[str, float]]:
    paths = [e.path for e in fs.list_dir("/t")]

    def best(fn) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    rows = [("sequential", best(lambda: [fs.list_dir(p) for p in paths]))]
    for w in workers:
        rows.append((f"parallel, {w} threads", best(lambda: list_dirs_parallel(fs, paths, max_workers=w))))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.002, help="seconds per request (server side)")
    ap.add_argument("--workers", default="4,16,32")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows = run(args.partitions, args.latency, [int(w) for w in args.workers.split(",")], args.repeat)
    print(f"{args.partitions} partition directories, {args.latency * 1000:.1f} ms per request, "
          f"{os.cpu_count()} CPUs, best of {args.repeat}")
    print(f"| {'mode':<22} | {'seconds':>8} | {'dirs/s':>8} | {'speed-up':>8} |")
    print(f"|{'-' * 24}|{'-' * 10}:|{'-' * 10}:|{'-' * 10}:|")
    base = rows[0][1]
    for name, secs in rows:
        print(f"| {name:<22} | {secs:8.3f} | {args.partitions / secs:8.0f} | {base / secs:7.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
