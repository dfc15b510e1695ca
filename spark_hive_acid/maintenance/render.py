"""The doctor's report for people (a table) and for monitoring (Prometheus text exposition)."""
from __future__ import annotations

from typing import Any, Iterable

from .health import HEALTHY


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def text(report: dict[str, Any], limit: int = 20) -> list[str]:
    """One line per table, then, for each table needing action, why and its flagged partitions
    (at most ``limit`` each), then the metastores."""
    head = (f"{'TABLE':<40} {'PARTS':>6} {'DELTAS':>7} {'MAX':>5} {'OBSOLETE':>16} "
            f"{'ABORTED':>14} {'SMALL':>6} {'MAJOR':>6} {'MINOR':>6}  VERDICT")
    lines = [head]
    for t in report["tables"]:
        if "error" in t:
            lines.append(f"{_cut(t['table'], 40):<40} {'-':>6} {'':>7} {'':>5} {'':>16} "
                         f"{'':>14} {'':>6} {'':>6} {'':>6}  error")
            continue
        tot, dec = t["totals"], t["compactIfNeeded"]
        obsolete = f"{tot['obsoleteDeltas']} ({size(tot['obsoleteBytes'])})"
        aborted = f"{tot['aborted']} ({size(tot['abortedBytes'])})"
        lines.append(f"{_cut(t['table'], 40):<40} {t['partitionCount']:>6} "
                     f"{tot['activeDeltas']:>7} {tot['maxActiveDeltas']:>5} {obsolete:>16} "
                     f"{aborted:>14} {tot['smallFiles']:>6} {dec['major']:>6} {dec['minor']:>6}"
                     f"  {t['verdict']}")
    for t in report["tables"]:
        if t["verdict"] == HEALTHY:
            continue
        lines.append("")
        lines.append(f"{t['table']}: {t['verdict']}")
        lines.extend(f"  - {r}" for r in t["reasons"])
        flagged = [p for p in t.get("partitions", []) if p.get("verdict") != HEALTHY]
        for p in flagged[:limit]:
            lines.append(f"  partition {p['partition'] or '(table)'}: {p['activeDeltas']} "
                         f"active deltas, delta/base {_ratio(p['deltaBaseRatio'])}, "
                         f"compactIfNeeded: {p['compactIfNeeded'].get('decision') or 'nothing'}")
            lines.extend(f"    exceeds: {e}" for e in p.get("exceeds", []))
            for f in p.get("compatibility", []):
                lines.append(f"    {f['engine']}: {f['effect']}: {f['layout']} "
                             f"(e.g. {', '.join(f['examples'][:2])}); {f['reference']}"
                             f" [{f['confirmed']}]; fix: {f['fix'] or 'none'}")
        if len(flagged) > limit:
            lines.append(f"  ... {len(flagged) - limit} more partition(s) (--json lists all)")
        for why in sorted(set((t.get("cleanBlockedBy") or {}).values()))[:3]:
            lines.append(f"  clean held back: {why}")
    notes: dict[str, tuple[dict, int]] = {}
    for t in report["tables"]:
        for f in t.get("compatibility", {}).get("table", []):
            key = f"{f['engine']}:{f['rule']}"
            notes[key] = (f, notes.get(key, (f, 0))[1] + 1)
    for f, n in notes.values():
        lines.append(f"note: {f['engine']} {f['effect']} for {n} table(s) here: {f['layout']} "
                     f"({f['reference']}; no layout change helps)")
    for m in report.get("metastores", []):
        old = m["oldestOpenTxn"]
        lines.append(f"metastore {m['uri']}: {m['openTxns']} open and {m['abortedTxns']} "
                     f"aborted transaction(s), {m['locks']} lock(s)"
                     + (f"; oldest open txn {old['txnId']} ({old['user']}@{old['host']}, "
                        f"{old['ageSeconds']} s)" if old else ""))
    s = report["summary"]
    lines.append(f"{s['tables']} table(s), {s['partitions']} partition(s): "
                 f"{s['tablesNeedingAction']} table(s) need action; "
                 f"{size(s['obsoleteBytes'])} obsolete and {size(s['abortedBytes'])} aborted "
                 f"bytes wait for a clean ({report['durationSeconds']} s)")
    return lines


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else "..." + s[-(n - 3):]


def _ratio(r: Any) -> str:
    return "-" if r is None else f"{r:.3f}"


# --- Prometheus text exposition format (version 0.0.4) -------------------------------------------
_HELP = {
    "hiveacid_table_partitions": "partitions of the table",
    "hiveacid_table_active_deltas": "deltas and delete deltas the current snapshot reads",
    "hiveacid_table_max_active_deltas": "most active deltas in one partition",
    "hiveacid_table_obsolete_deltas": "obsolete deltas waiting for a clean",
    "hiveacid_table_obsolete_bytes": "bytes of obsolete directories waiting for a clean",
    "hiveacid_table_aborted_dirs": "aborted directories waiting for a clean",
    "hiveacid_table_aborted_bytes": "bytes of aborted directories",
    "hiveacid_table_small_files": "data files read smaller than the small-file size",
    "hiveacid_table_partitions_exceeding": "partitions above a HIVE-24974 threshold",
    "hiveacid_table_compaction_partitions": "partitions compactIfNeeded would compact",
    "hiveacid_table_engine_findings": "partitions with a layout the engine misreads or refuses",
    "hiveacid_table_needs_action": "1 when the table needs action",
    "hiveacid_table_error": "1 when the table could not be looked at",
    "hiveacid_metastore_table_compactions": "the table's compactions in the metastore, by state",
    "hiveacid_metastore_table_stopped_partitions": "partitions Hive stopped compacting",
    "hiveacid_metastore_open_txns": "open transactions",
    "hiveacid_metastore_aborted_txns": "aborted transactions not yet cleaned",
    "hiveacid_metastore_oldest_open_txn_age_seconds": "age of the oldest open transaction",
    "hiveacid_doctor_duration_seconds": "how long the doctor took",
}


def _label(v: Any) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _samples(report: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any], float]]:
    for t in report["tables"]:
        lab = {"table": t["table"]}
        yield "hiveacid_table_error", lab, 1 if "error" in t else 0
        yield "hiveacid_table_needs_action", lab, 0 if t["verdict"] == HEALTHY else 1
        if "error" in t:
            continue
        tot = t["totals"]
        yield "hiveacid_table_partitions", lab, t["partitionCount"]
        for name, key in (("active_deltas", "activeDeltas"), ("max_active_deltas",
                                                               "maxActiveDeltas"),
                          ("obsolete_deltas", "obsoleteDeltas"), ("obsolete_bytes",
                                                                  "obsoleteBytes"),
                          ("aborted_dirs", "aborted"), ("aborted_bytes", "abortedBytes"),
                          ("small_files", "smallFiles"), ("partitions_exceeding",
                                                          "partitionsExceeding")):
            yield f"hiveacid_table_{name}", lab, tot[key]
        for kind, n in t["compactIfNeeded"].items():
            yield "hiveacid_table_compaction_partitions", {**lab, "kind": kind}, n
        for key, n in t["compatibility"]["partitions"].items():
            engine, _, rule = key.partition(":")
            yield "hiveacid_table_engine_findings", {**lab, "engine": engine, "rule": rule}, n
        hms = t.get("metastore")
        if hms:
            for state in ("failed", "didNotInitiate", "stuckWorking", "queued"):
                yield ("hiveacid_metastore_table_compactions", {**lab, "state": state},
                       len(hms[state]))
            yield "hiveacid_metastore_table_stopped_partitions", lab, len(hms["stoppedPartitions"])
    for m in report.get("metastores", []):
        lab = {"metastore": m["uri"]}
        yield "hiveacid_metastore_open_txns", lab, m["openTxns"]
        yield "hiveacid_metastore_aborted_txns", lab, m["abortedTxns"]
        old = m["oldestOpenTxn"]
        yield ("hiveacid_metastore_oldest_open_txn_age_seconds", lab,
               (old or {}).get("ageSeconds") or 0)
    yield "hiveacid_doctor_duration_seconds", {}, report["durationSeconds"]


def prometheus(report: dict[str, Any]) -> str:
    """The report as Prometheus' text exposition format (one HELP/TYPE per metric, gauges)."""
    by_name: dict[str, list[str]] = {}
    for name, labels, value in _samples(report):
        lab = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        num = float(value)
        shown = str(int(num)) if num.is_integer() else repr(num)
        by_name.setdefault(name, []).append(f"{name}{{{lab}}} {shown}" if lab
                                            else f"{name} {shown}")
    out = []
    for name, samples in by_name.items():
        out.append(f"# HELP {name} {_HELP[name]}")
        out.append(f"# TYPE {name} gauge")
        out.extend(samples)
    return "\n".join(out) + "\n"
