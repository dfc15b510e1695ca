"""Warehouse tools benchmark: ``python -m bench.maintenance [--sizes 2000,20000] [--metastore]
[--real]`` (docs/benchmarks.md, "Warehouse tools").

For each size, a warehouse of ``size / 100`` tables of 100 partitions (``bench/warehouse.py``:
healthy, minor- and major-compaction candidates, obsolete directories, attempt-id delete files,
original files), then, interleaved, ``--reps`` times:

* **walk**: a plain listing of every directory of the tree, level by level, with the same thread
  pool the library lists with (``io.parallel.list_dirs_parallel``, 16 threads): the baseline;
* **os.walk**: the same tree with Python's ``os.walk`` (one thread), for reference;
* **doctor**: ``hiveacid doctor --warehouse`` end to end (finding the tables included);
* **plan**: ``maintain --dry-run``'s planning.

Ratios against the walk of the same run (the machine is shared); the best of the reps.
``--metastore``: the largest warehouse registered in a Hive Metastore 2.3.10
(tests/metastore_server), doctor and plan by ``--database``. ``--real``: a real ``maintain``
(in this process's code, as ``hiveacid maintain`` runs: ``--concurrency 2``) of a hard-linked
copy of the largest warehouse, in a child process whose peak RSS is read from the kernel.
Results in ``bench/results/maintenance.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from .gen import ROOT, link_copy
from .warehouse import HIVE_COLUMNS, LAYOUTS, generate

RESULTS = ROOT / "bench" / "results" / "maintenance.json"
WORK = ROOT / ".build" / "bench-maintenance"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def walk(root: Path) -> int:
    """List every directory below ``root`` once, level by level, 16 threads: the baseline."""
    from spark_hive_acid.io.filesystem import LocalFileSystem
    from spark_hive_acid.io.parallel import list_dirs_parallel

    fs, level, n = LocalFileSystem(), [str(root)], 0
    while level:
        listed = list_dirs_parallel(fs, level, 16)
        n += len(listed)
        level = [c.path for children in listed.values() for c in children if c.is_dir]
    return n


def os_walk(root: Path) -> int:
    return sum(1 for _ in os.walk(root))


def doctor_run(wh: Path) -> dict:
    from spark_hive_acid.maintenance.doctor import doctor
    from spark_hive_acid.maintenance.targets import Targets, resolve

    return doctor(resolve(Targets(warehouses=[str(wh)])))


def plan_run(refs) -> dict:
    from spark_hive_acid.maintenance.maintain import MaintainSettings, maintain

    return maintain(refs, MaintainSettings(dry_run=True))


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def measure_size(size: int, reps: int) -> dict:
    from spark_hive_acid.maintenance.targets import Targets, resolve

    tables = max(1, size // 100)
    root = WORK / f"w{size}"
    t0 = time.perf_counter()
    generate(root, tables, 100)
    wh = root / "warehouse"
    log(f"{size} partitions in {tables} tables generated in {time.perf_counter() - t0:.1f} s")
    best: dict[str, float] = {}
    dirs = 0
    doc: dict = {}
    plan: dict = {}
    for _ in range(reps):
        for name, fn in (("walk", lambda: walk(wh)), ("os_walk", lambda: os_walk(wh)),
                         ("doctor", lambda: doctor_run(wh)),
                         ("plan", lambda: plan_run(resolve(Targets(warehouses=[str(wh)]))))):
            s, out = timed(fn)
            best[name] = min(best.get(name, s), s)
            if name == "walk":
                dirs = out
            elif name == "doctor":
                doc = out
            elif name == "plan":
                plan = out
    opened = sum(t["scan"]["filesOpened"] for t in doc["tables"])
    res = {"partitions": size, "tables": tables, "directories": dirs,
           **{f"{k}_s": round(v, 3) for k, v in best.items()},
           "doctor_over_walk": round(best["doctor"] / best["walk"], 2),
           "plan_over_walk": round(best["plan"] / best["walk"], 2),
           "doctor_us_per_partition": round(best["doctor"] / size * 1e6, 1),
           "plan_us_per_partition": round(best["plan"] / size * 1e6, 1),
           "walk_us_per_partition": round(best["walk"] / size * 1e6, 1),
           "files_opened": opened,
           "partitions_flagged": doc["summary"]["partitionsFlagged"],
           "partitions_planned": plan["summary"]["partitionsPlanned"]}
    log(json.dumps(res))
    return res


def real_maintain(size: int) -> dict:
    src = WORK / f"w{size}" / "warehouse"
    dst = WORK / f"w{size}-real"
    link_copy(src, dst)
    cmd = [sys.executable, "-m", "spark_hive_acid", "maintain", "--warehouse", str(dst),
           "--concurrency", "2", "--retention-hours", "0", "--json", "--no-progress"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:] + out.stdout[-3000:])
    report = json.loads(out.stdout)
    s = report["summary"]
    res = {"partitions": size, "partitions_compacted": s["partitionsCompacted"],
           "tables_failed": s["tablesFailed"], "wall_s": round(wall, 1),
           "plan_s": report["planSeconds"],
           "ms_per_partition_compacted": round(wall / max(s["partitionsCompacted"], 1) * 1e3, 1),
           "peak_rss_mib": round(peak_kib / 1024, 1)}
    log(json.dumps(res))
    return res


def metastore(size: int, reps: int) -> dict:
    """The warehouse of ``size`` registered in a Hive Metastore 2.3.10; doctor and plan by
    database against the walk of the same tree."""
    sys.path.insert(0, str(ROOT / "tests"))
    from metastore_server.server import MetastoreServer

    from spark_hive_acid.maintenance.targets import Targets, resolve
    from spark_hive_acid.metastore import MetastoreClient

    wh = WORK / f"w{size}" / "warehouse"
    server = MetastoreServer(WORK / "metastore", heap="1g")
    if (WORK / "metastore").exists():
        import shutil

        shutil.rmtree(WORK / "metastore")
    with server:
        t0 = time.perf_counter()
        with MetastoreClient(server.uri, timeout=600) as c:
            c.create_database("bench")
            for _ in range(23):  # Hive 2.3: write id = txn id; the tables' ids go up to 22
                c.commit_txn(c.open_txn())
            for t in sorted(wh.iterdir()):
                c.create_table("bench", t.name, HIVE_COLUMNS, partition_keys=[("p", "string")],
                               bucket_cols=["id"], num_buckets=1, location=f"file:{t}")
                c.add_partitions("bench", t.name, [{"p": str(i)} for i in range(100)])
        log(f"registered {size} partitions in {time.perf_counter() - t0:.1f} s")
        opts = {"metastoreUri": server.uri}
        best: dict[str, float] = {}
        for _ in range(reps):
            for name, fn in (
                    ("walk", lambda: walk(wh)),
                    ("doctor", lambda: _doctor_db(opts)),
                    ("plan", lambda: plan_run(resolve(Targets(databases=["bench"],
                                                              options=opts))))):
                s, out = timed(fn)
                best[name] = min(best.get(name, s), s)
                if name == "doctor":
                    doc = out
    res = {"partitions": size, **{f"{k}_s": round(v, 3) for k, v in best.items()},
           "doctor_over_walk": round(best["doctor"] / best["walk"], 2),
           "plan_over_walk": round(best["plan"] / best["walk"], 2),
           "doctor_us_per_partition": round(best["doctor"] / size * 1e6, 1),
           "files_opened": sum(t["scan"]["filesOpened"] for t in doc["tables"]),
           "partitions_flagged": doc["summary"]["partitionsFlagged"]}
    log(json.dumps(res))
    return res


def _doctor_db(opts):
    from spark_hive_acid.maintenance.doctor import doctor
    from spark_hive_acid.maintenance.targets import Targets, resolve

    return doctor(resolve(Targets(databases=["bench"], options=opts)))


def figure(scaling: list[dict], path: Path) -> None:
    """Seconds against partitions: the walk, the doctor, the plan (matplotlib, the bench
    extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["partitions"] for r in scaling]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for key, label in (("walk_s", "directory walk (baseline)"), ("doctor_s", "doctor"),
                       ("plan_s", "maintain --dry-run"), ("os_walk_s", "os.walk (names only)")):
        ax.plot(xs, [r[key] for r in scaling], marker="o", label=label)
    ax.set_xlabel("partitions (100 per table)")
    ax.set_ylabel("seconds (best of the reps)")
    ax.set_title("Warehouse tools: time against partitions")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,5000,10000,20000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--metastore", action="store_true")
    ap.add_argument("--real", action="store_true")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    out: dict = {"layouts": dict(LAYOUTS), "cpus": os.cpu_count(),
                 "loadavg_start": os.getloadavg(), "scaling": []}
    for size in sizes:
        out["scaling"].append(measure_size(size, args.reps))
    if args.metastore:
        out["metastore"] = metastore(max(sizes), args.reps)
    if args.real:
        out["real"] = real_maintain(max(sizes))
    out["loadavg_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2))
    figure(out["scaling"], RESULTS.with_suffix(".png"))
    log(f"results in {RESULTS}")
    return out


if __name__ == "__main__":
    main()
