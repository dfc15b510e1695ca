"""spark-hive-acid benchmarks: ``python -m bench.run --scenario quick|reference|scaling|all``.

Everything in one run on the same files: hiveacid through Spark, Spark's own ORC reader raw and
with the left-anti join a user would write, the in-process reader against raw pyarrow, writes,
and the delete-event set. Results are ratios against a baseline measured in the same run (the
machine is shared, absolute times are noisy). See docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from . import delete_set
from .gen import ROOT, TableParams, dir_bytes, generate, table_meta
from .timing import measure, ratio

RESULTS_DIR = ROOT / "bench" / "results"
DOCS = ROOT / "docs"
SECTIONS = ("scans", "memory", "inproc", "profile", "threads", "writes", "dml", "deleteset", "levers")

SCENARIOS = {
    # quick: 4 shuffle partitions (the DML writer runs one Python task per shuffle partition)
    "quick": dict(rows=300_000, insert_deltas=3, delete_deltas=4, delete_fraction=0.10, reps=2,
                  warmup=1, write_rows=200_000, dml_reps=1, dml_warmup=0, shuffle_partitions=4,
                  deleteset_sizes=[1_000_000], skip={"levers", "threads", "profile"}),
    "reference": dict(rows=10_000_000, insert_deltas=10, delete_deltas=20, delete_fraction=0.10,
                      reps=5, warmup=1, write_rows=2_000_000, dml_reps=3, dml_warmup=1,
                      deleteset_sizes=[1_000_000, 10_000_000], skip=set()),
    "scaling": dict(rows=10_000_000, insert_deltas=10, delete_deltas=20, delete_fraction=0.10,
                    reps=3, warmup=1, skip=set()),
}
SCALING = {  # cheapest studies first: a long run interrupted still has them (see *.partial.json)
    "partitions": [1, 100, 1000],
    "delete_deltas": [1, 20, 200],
    "delete_fraction": [0.0, 0.01, 0.10, 0.50],
    "rows": [1_000_000, 10_000_000, 30_000_000],
}
PARTITION_STUDY = dict(rows=1_000_000, insert_deltas=1, delete_deltas=2)

_T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - _T0:7.1f}s] {msg}", flush=True)


# --- machine -------------------------------------------------------------------------------------
def machine_info() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["mem_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    import numpy
    import pyarrow
    import pyspark

    info.update(pyspark=pyspark.__version__, pyarrow=pyarrow.__version__, numpy=numpy.__version__)
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        info["java"] = (out.stderr or out.stdout).splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    return info


def inproc(mode: str, path: Path, reps: int = 3, warmup: int = 1) -> dict:
    """Run ``bench.inproc`` in a fresh interpreter (clean ru_maxrss, no Spark in the process)."""
    cmd = [sys.executable, "-m", "bench.inproc", mode, str(path), "--reps", str(reps),
           "--warmup", str(warmup)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    for line in out.stderr.splitlines():
        log("  " + line.strip())
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- reference -----------------------------------------------------------------------------------
def run_reference(sb, p: TableParams, cfg: dict, partial=None) -> dict:
    skip = cfg["skip"]
    path = generate(p, log=log)
    meta = table_meta(path)
    res: dict = {"params": asdict(p), "table": str(path), "table_bytes": dir_bytes(path),
                 "visible_rows": meta["visible_rows"], "deleted_rows": meta["deleted"]}
    reps, warmup = cfg["reps"], cfg["warmup"]
    if "scans" not in skip:
        log(f"sections 1-3: Spark scans of {path.name} ({reps} reps + {warmup} warm-up)")
        res["scans"] = sb.scans(str(path), reps, warmup)
        res["orc_impl"] = sb.orc_impl
        res["orc_native_error"] = sb.orc_native_error
        res["antijoin_strategy"] = sb.join_strategy(str(path))
        res["checks"] = checks(res["scans"], meta)
        res["tasks"] = sb.hiveacid(str(path)).rdd.getNumPartitions()
        res["orc_tasks"] = sb.raw_orc(str(path)).rdd.getNumPartitions()
        if partial:
            partial(res)
    if "memory" not in skip:
        log("memory: Python worker RSS during a hiveacid aggregate; reader in a fresh process")
        res["memory_spark"] = sb.worker_memory(str(path))
        res["memory_inproc"] = inproc("memory", path)
        if partial:
            partial(res)
    if "inproc" not in skip:
        log("section 4: in-process reader vs raw pyarrow")
        res["inproc"] = inproc("compare", path, reps, warmup)
        if partial:
            partial(res)
    if "profile" not in skip:
        log("profile: cProfile of the in-process reader")
        res["profile"] = inproc("profile", path)
        if partial:
            partial(res)
    if "threads" not in skip:
        log("lever: pyarrow thread pools (in-process)")
        res["threads"] = inproc("threads", path, max(2, reps - 2), warmup)
    if "writes" not in skip:
        log(f"section 5: writes of {cfg['write_rows']} rows")
        res["writes"] = sb.writes(cfg["write_rows"], reps, warmup)
        if partial:
            partial(res)
    if "dml" not in skip:
        log("section 5: DELETE / UPDATE of 1% of the rows")
        res["dml"] = sb.dml(str(path), cfg["dml_reps"], cfg["dml_warmup"])
        if partial:
            partial(res)
    if "deleteset" not in skip:
        log("section 6: delete-event set")
        res["delete_set"] = delete_set.run(cfg["deleteset_sizes"], reps, warmup, log=log)
        if partial:
            partial(res)
    if "levers" not in skip:
        log("levers: splitSize, batch size, filter pushdown")
        res["levers"] = sb.levers(str(path), max(2, reps - 2), warmup)
        if "dml" not in skip:
            res["levers"]["dml_shuffle_partitions"] = sb.dml_shuffle_lever(str(path), 1, 0)
    res["ratios"] = ratios(res)
    return res


def checks(scans: dict, meta: dict) -> dict:
    def result(name):
        return scans.get(name, {}).get("result")

    out = {}
    if result("hiveacid_count") is not None:
        out["hiveacid_count == visible rows"] = result("hiveacid_count") == meta["visible_rows"]
    if result("hiveacid_count_columns") is not None:
        out["hiveacid_count_columns == visible rows"] = \
            result("hiveacid_count_columns") == meta["visible_rows"]
    if result("hiveacid_count_table") is not None:
        out["hiveacid_count_table == visible rows"] = \
            result("hiveacid_count_table") == meta["visible_rows"]
    if result("antijoin_count") is not None:
        out["antijoin_count == visible rows"] = result("antijoin_count") == meta["visible_rows"]
    if result("orc_raw_count") is not None:
        out["orc_raw_count == all rows (deletes ignored)"] = result("orc_raw_count") == meta["rows"]
    a, b = result("hiveacid_agg"), result("antijoin_agg")
    if a is not None and b is not None:
        out["hiveacid aggregate == anti-join aggregate"] = _agg_equal(a, b)
    return out


def _agg_equal(a: dict, b: dict) -> bool:
    for k in a:
        x, y = a[k], b.get(k)
        if isinstance(x, float) and isinstance(y, float):
            if abs(x - y) > 1e-6 * max(1.0, abs(x)):
                return False
        elif x != y:
            return False
    return True


def _r(name, value, op, target, note=""):
    ok = None if value is None or target is None else (value <= target if op == "<=" else value >= target)
    return {"name": name, "value": value, "op": op, "target": target, "ok": ok, "note": note}


def ratios(res: dict) -> list[dict]:
    out = []
    s = res.get("scans") or {}
    if s:
        out.append(_r("hiveacid agg / anti-join agg", ratio(s.get("hiveacid_agg"), s.get("antijoin_agg")), "<=", 0.5))
        out.append(_r("hiveacid count / anti-join count", ratio(s.get("hiveacid_count"), s.get("antijoin_count")), "<=", 0.5))
        impl = res.get("orc_impl")
        out.append(_r(f"hiveacid agg / Spark ORC raw agg ({impl})", ratio(s.get("hiveacid_agg"), s.get("orc_raw_agg")), "<=", 0.8))
        out.append(_r(f"hiveacid count / Spark ORC raw count ({impl})", ratio(s.get("hiveacid_count"), s.get("orc_raw_count")), "<=", 0.8))
        if s.get("hiveacid_count_columns"):
            note = "workaround: .option('columns', 'id'), since PySpark prunes no columns"
            out.append(_r("hiveacid count (columns=id) / anti-join count", ratio(s.get("hiveacid_count_columns"), s.get("antijoin_count")), "<=", 0.5, note))
            out.append(_r(f"hiveacid count (columns=id) / Spark ORC raw count ({impl})", ratio(s.get("hiveacid_count_columns"), s.get("orc_raw_count")), "<=", 0.8, note))
        if s.get("hiveacid_count_table"):
            note = "HiveAcidTable.forPath(spark, p).count(): option countRows, one number per task"
            out.append(_r("HiveAcidTable.count() / anti-join count", ratio(s.get("hiveacid_count_table"), s.get("antijoin_count")), "<=", 0.5, note))
            out.append(_r(f"HiveAcidTable.count() / Spark ORC raw count ({impl})", ratio(s.get("hiveacid_count_table"), s.get("orc_raw_count")), "<=", 0.8, note))
    ip = res.get("inproc") or {}
    if ip and "error" not in ip:
        out.append(_r("in-process reader / raw pyarrow `row` decode (throughput)",
                      ratio(ip.get("raw_pyarrow_row"), ip.get("reader_cold")), ">=", 0.85,
                      "delete set rebuilt every run (cold)"))
        out.append(_r("in-process reader (warm delete set) / raw pyarrow",
                      ratio(ip.get("raw_pyarrow_row"), ip.get("reader_warm")), ">=", 0.85,
                      "delete set cached, as in a reused Spark worker"))
    ds = res.get("delete_set") or {}
    for n, rec in ds.items():
        if rec.get("bytes_per_event") is not None:
            out.append(_r(f"delete set bytes/event ({int(n) / 1e6:g}M)", rec["bytes_per_event"], "<=", 16))
        if int(n) == 10_000_000 and rec.get("median_s") is not None:
            out.append(_r("delete set build 10M events (s)", rec["median_s"], "<=", 3))
    w = res.get("writes") or {}
    if w.get("error"):
        out.append(_r("append throughput / df.write.orc", None, ">=", 0.5, "writer not available: " + w["error"]))
    elif w:
        out.append(_r("append throughput / df.write.orc", ratio(w.get("df.write.orc"), w.get("hiveacid_append")), ">=", 0.5,
                      "hiveacid ZLIB (Hive's default) vs Spark's snappy"))
        if w.get("df.write.orc_zlib"):
            out.append(_r("append throughput / df.write.orc, both ZLIB",
                          ratio(w.get("df.write.orc_zlib"), w.get("hiveacid_append")), ">=", 0.5))
        if w.get("hiveacid_append_snappy"):
            out.append(_r("append throughput / df.write.orc, both snappy",
                          ratio(w.get("df.write.orc"), w.get("hiveacid_append_snappy")), ">=", 0.5))
        if w.get("python_sink_floor"):
            out.append(_r("Python sink that writes nothing / df.write.orc (throughput)",
                          ratio(w.get("df.write.orc"), w.get("python_sink_floor")), "", None,
                          "the ceiling of any Python data source append"))
            out.append(_r("append throughput / that Python sink",
                          ratio(w.get("python_sink_floor"), w.get("hiveacid_append")), "", None,
                          "the share the connector's encoding leaves"))
    d = res.get("dml") or {}
    for op in ("delete_1pct", "update_1pct"):
        rec = d.get(op) or ({"error": d["error"]} if d.get("error") else None)
        if rec is None:
            continue
        if "error" in rec:
            out.append(_r(f"{op.split('_')[0].upper()} 1% / full hiveacid scan", None, "<=", 1.5,
                          rec["error"] if rec["error"].startswith("writer") else "writer not available: " + rec["error"]))
            continue
        out.append(_r(f"{op.split('_')[0].upper()} 1% / full hiveacid scan (agg)", ratio(rec, s.get("hiveacid_agg")), "<=", 1.5))
        out.append(_r(f"{op.split('_')[0].upper()} 1% / full hiveacid scan (count)", ratio(rec, s.get("hiveacid_count")), "<=", 1.5))
    ms, mi = res.get("memory_spark") or {}, res.get("memory_inproc") or {}
    if ms.get("peak_worker_rss_bytes"):
        out.append(_r("peak Python worker RSS during Spark scan (GB)", round(ms["peak_worker_rss_bytes"] / 2**30, 3), "<=", 1.0))
    if mi.get("maxrss_bytes"):
        out.append(_r("peak RSS of the in-process reader (GB)", round(mi["maxrss_bytes"] / 2**30, 3), "<=", 1.0))
    return out


# --- scaling -------------------------------------------------------------------------------------
def run_scaling(sb, base: TableParams, cfg: dict, studies: list[str], values: dict,
                partial=None) -> dict:
    out: dict = {}
    from .inproc import plan

    for study in studies:
        points = []
        for x in values[study]:
            if study == "partitions":
                p = replace(base, partitions=x, **PARTITION_STUDY)
            else:
                p = replace(base, **{study: x})
            path = generate(p, log=log)
            meta = table_meta(path)
            log(f"scaling {study}={x}: {path.name}")
            point = {"x": x, "params": asdict(p), "table_bytes": dir_bytes(path),
                     "visible_rows": meta["visible_rows"]}
            if study == "partitions":
                pl = measure({"plan": lambda: len(plan(str(path)).tasks()),
                              "spark_load": lambda: sb.hiveacid(str(path)).schema},
                             reps=cfg["reps"], warmup=cfg["warmup"])
                point["plan_s"] = pl["plan"].get("median_s")
                point["spark_load_s"] = pl["spark_load"].get("median_s")
                point["tasks"] = pl["plan"].get("result")
            point["scans"] = sb.scans(str(path), cfg["reps"], cfg["warmup"],
                                      names=("hiveacid_count", "hiveacid_agg", "orc_raw_agg",
                                             "antijoin_agg"))
            point["checks"] = checks(point["scans"], meta)
            s = point["scans"]
            point["ratios"] = {"hiveacid/antijoin": ratio(s.get("hiveacid_agg"), s.get("antijoin_agg")),
                               "hiveacid/orc_raw": ratio(s.get("hiveacid_agg"), s.get("orc_raw_agg"))}
            points.append(point)
            out[study] = points
            if partial:
                partial(out)
    return out


# --- output --------------------------------------------------------------------------------------
def _fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def print_tables(results: dict) -> None:
    ref = results.get("reference")
    if ref:
        print()
        print(f"== reference: {ref['params']['rows']:,} rows, {ref['visible_rows']:,} visible, "
              f"{ref['table_bytes'] / 1e6:.0f} MB, Spark ORC impl={ref.get('orc_impl')}, "
              f"anti-join={ref.get('antijoin_strategy')}")
        for sec in ("scans", "inproc"):
            for name, rec in (ref.get(sec) or {}).items():
                if isinstance(rec, dict) and ("median_s" in rec or "error" in rec):
                    print(f"  {sec:7s} {name:34s} median {_fmt(rec.get('median_s')):>8s} s  "
                          f"{rec.get('error', '')}")
        for group, recs in (ref.get("levers") or {}).items():
            for name, rec in recs.items():
                if isinstance(rec, dict) and ("median_s" in rec or "error" in rec):
                    print(f"  lever   {group + ': ' + name:52s} median {_fmt(rec.get('median_s')):>8s} s "
                          f"{rec.get('error', '')}")
        for name, rec in (ref.get("threads") or {}).items():
            if isinstance(rec, dict) and "median_s" in rec:
                print(f"  lever   {name:52s} median {_fmt(rec.get('median_s')):>8s} s")
        for name, ok in (ref.get("checks") or {}).items():
            print(f"  check   {name}: {'ok' if ok else 'MISMATCH'}")
        for line in _skips(ref):
            print("  " + line)
        print()
        print(f"  {'ratio / metric':58s} {'value':>8s}  target   ok")
        for r in ref.get("ratios", []):
            if r["target"] is None:  # context, no target
                print(f"  {r['name']:58s} {_fmt(r['value']):>8s}  {'—':8s} info"
                      + (f"   ({r['note']})" if r["note"] else ""))
                continue
            ok = {True: "yes", False: "NO", None: "skip"}[r["ok"]]
            print(f"  {r['name']:58s} {_fmt(r['value']):>8s}  {r['op']} {r['target']:<5g} {ok}"
                  + (f"   ({r['note']})" if r["note"] else ""))
    sc = results.get("scaling")
    if sc:
        print()
        print("== scaling (medians, s)")
        print(f"  {'study':16s} {'x':>10s} {'hiveacid agg':>13s} {'count':>8s} {'ORC raw':>8s} "
              f"{'anti-join':>9s} {'plan':>7s}")
        for study, points in sc.items():
            for p in points:
                s = p["scans"]
                print(f"  {study:16s} {p['x']:>10g} {_fmt(s.get('hiveacid_agg', {}).get('median_s')):>13s} "
                      f"{_fmt(s.get('hiveacid_count', {}).get('median_s')):>8s} "
                      f"{_fmt(s.get('orc_raw_agg', {}).get('median_s')):>8s} "
                      f"{_fmt(s.get('antijoin_agg', {}).get('median_s')):>9s} {_fmt(p.get('plan_s')):>7s}")


def scaling_markdown(sc: dict) -> str:
    """The scaling results as a Markdown table (for docs/benchmarks.md)."""
    def med(p, k):
        return p["scans"].get(k, {}).get("median_s")

    lines = ["| study | x | hiveacid agg (s) | hiveacid count (s) | ORC raw agg (s) | anti-join agg (s) "
             "| hiveacid / anti-join | hiveacid / ORC raw | plan (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for study, points in sc.items():
        for p in points:
            x = f"{p['x'] * 100:g}%" if study == "delete_fraction" else f"{p['x']:,}"
            r = p.get("ratios", {})
            lines.append(f"| {study} | {x} | {_fmt(med(p, 'hiveacid_agg'))} | {_fmt(med(p, 'hiveacid_count'))} "
                         f"| {_fmt(med(p, 'orc_raw_agg'))} | {_fmt(med(p, 'antijoin_agg'))} "
                         f"| {_fmt(r.get('hiveacid/antijoin'))} | {_fmt(r.get('hiveacid/orc_raw'))} "
                         f"| {_fmt(p.get('plan_s'))} |")
    return "\n".join(lines)


def _skips(ref: dict) -> list[str]:
    lines = []
    w = ref.get("writes") or {}
    if w.get("error"):
        lines.append(f"writes: writer not available: {w['error']}")
    d = ref.get("dml") or {}
    if d.get("error"):
        lines.append(f"dml: writer not available: {d['error']}")
    for op in ("delete_1pct", "update_1pct"):
        if isinstance(d.get(op), dict) and d[op].get("error"):
            lines.append(f"dml {op}: {d[op]['error']}")
    return lines


def _clean(obj):
    """JSON-safe: drop bulky results, keep scalars."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default="quick", choices=["quick", "reference", "scaling", "all"])
    ap.add_argument("--rows", type=int)
    ap.add_argument("--delete-fraction", type=float)
    ap.add_argument("--insert-deltas", type=int)
    ap.add_argument("--delete-deltas", type=int)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--compression", default="zlib", choices=["zlib", "snappy", "zstd", "uncompressed"])
    ap.add_argument("--reps", type=int, help="timed repetitions (median reported)")
    ap.add_argument("--warmup", type=int, help="untimed warm-up runs")
    ap.add_argument("--write-rows", type=int)
    ap.add_argument("--skip", default="", help=f"comma list of sections: {','.join(SECTIONS)}")
    ap.add_argument("--scaling-studies", default=",".join(SCALING),
                    help="comma list of: " + ",".join(SCALING))
    ap.add_argument("--scaling-rows", type=int, help="base rows of the scaling studies")
    ap.add_argument("--scaling-rows-list", help="rows study points, e.g. 1000000,10000000")
    ap.add_argument("--cores", type=int, default=2, help="local[N]")
    ap.add_argument("--shuffle-partitions", type=int,
                    help="spark.sql.shuffle.partitions (default: Spark's 200; quick uses 4)")
    ap.add_argument("--publish", action="store_true",
                    help="also write docs/benchmarks-reference.json and docs/figures/*.png")
    ap.add_argument("--from-json", metavar="FILE",
                    help="no measuring: print the tables and draw the figures of a results JSON "
                         "(e.g. a *.partial.json of an interrupted run)")
    args = ap.parse_args(argv)
    if args.from_json:
        return redraw(Path(args.from_json), args.publish)

    scen = "reference" if args.scenario == "all" else args.scenario
    cfg = dict(SCENARIOS[scen])
    cfg["skip"] = set(cfg["skip"]) | {s.strip() for s in args.skip.split(",") if s.strip()}
    for k in ("reps", "warmup", "write_rows"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    p = TableParams(rows=args.rows or cfg["rows"],
                    delete_fraction=cfg["delete_fraction"] if args.delete_fraction is None else args.delete_fraction,
                    insert_deltas=cfg["insert_deltas"] if args.insert_deltas is None else args.insert_deltas,
                    delete_deltas=cfg["delete_deltas"] if args.delete_deltas is None else args.delete_deltas,
                    partitions=args.partitions, compression=args.compression)

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    results: dict = {"command": "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:]),
                     "scenario": args.scenario, "started": stamp, "machine": machine_info()}
    log(f"scenario {args.scenario}; machine: {results['machine'].get('cpu_model')}, "
        f"{results['machine']['cpus']} cpus, load {results['machine']['loadavg_start']}")
    from .spark_cases import SparkBench, start_spark

    spark = start_spark(args.cores, shuffle_partitions=args.shuffle_partitions or cfg.get("shuffle_partitions"))
    results["spark_conf"] = {"master": spark.sparkContext.master,
                             "driver_memory": spark.conf.get("spark.driver.memory", None),
                             "spark.sql.shuffle.partitions": spark.conf.get("spark.sql.shuffle.partitions")}
    sb = SparkBench(spark, log=log)
    try:
        if args.scenario in ("quick", "reference", "all"):
            ref_part = RESULTS_DIR / f"{stamp}.partial.json"
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)

            def ref_partial(r):
                ref_part.write_text(json.dumps(_clean({**results, "reference": r}), indent=1))
            results["reference"] = run_reference(sb, p, cfg, ref_partial)
        if args.scenario in ("scaling", "all"):
            scfg = dict(SCENARIOS["scaling"])
            for k in ("reps", "warmup"):
                if getattr(args, k) is not None:
                    scfg[k] = getattr(args, k)
            values = dict(SCALING)
            if args.scaling_rows_list:
                values["rows"] = [int(v) for v in args.scaling_rows_list.split(",")]
            base = TableParams(rows=args.scaling_rows or scfg["rows"],
                               delete_fraction=scfg["delete_fraction"],
                               insert_deltas=scfg["insert_deltas"],
                               delete_deltas=scfg["delete_deltas"], compression=args.compression)
            studies = [s.strip() for s in args.scaling_studies.split(",") if s.strip()]
            part_file = RESULTS_DIR / f"{stamp}.partial.json"
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)

            def partial(sc):
                part_file.write_text(json.dumps(_clean({**results, "scaling": sc}), indent=1))
            results["scaling"] = run_scaling(sb, base, scfg, studies, values, partial)
    finally:
        results["machine"]["loadavg_end"] = os.getloadavg()
        results["elapsed_s"] = round(time.perf_counter() - _T0, 1)
        spark.stop()
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        out = RESULTS_DIR / f"{stamp}.json"
        out.write_text(json.dumps(_clean(results), indent=1))
        log(f"results: {out}")
    print_tables(results)
    from .figures import draw

    fig_dir = DOCS / "figures" if args.publish else RESULTS_DIR / f"{stamp}-figures"
    try:
        files = draw(results, fig_dir)
        log("figures: " + ", ".join(files))
    except Exception as e:  # noqa: BLE001 - a missing matplotlib must not lose the numbers
        log(f"figures not drawn: {type(e).__name__}: {e}")
    if args.publish:
        name = "benchmarks-scaling.json" if args.scenario == "scaling" else "benchmarks-reference.json"
        (DOCS / name).write_text(json.dumps(_clean(results), indent=1))
        log(f"published {DOCS / name}")
    log(f"done in {time.perf_counter() - _T0:.0f}s")
    return 0


def redraw(path: Path, publish: bool) -> int:
    from .figures import draw

    results = json.loads(path.read_text())
    if results.get("reference") and not results["reference"].get("ratios"):
        results["reference"]["ratios"] = ratios(results["reference"])  # a partial run
    print_tables(results)
    if results.get("scaling"):
        print()
        print(scaling_markdown(results["scaling"]))
    fig_dir = DOCS / "figures" if publish else path.with_suffix("").with_name(path.stem + "-figures")
    log("figures: " + ", ".join(draw(results, fig_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
