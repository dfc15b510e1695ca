"""``hiveacid doctor``: the health of many tables, from their listings (docs/maintenance.md).

Per table and partition: what the snapshot reads (deltas, delete deltas, delta/base size), what
waits for a clean (obsolete and aborted directories and their bytes), small files, what
``compactIfNeeded`` would do and why, the thresholds of HIVE-24974 a partition exceeds, and the
layouts other engines misread or refuse (``maintenance.compat``). Tables of a metastore add what
the metastore says (``maintenance.hms_findings``). No data file is opened; tables are looked at
``concurrency`` at a time, each one's directories listed in parallel.

:func:`doctor` returns a JSON-able report; ``report["needsAction"]`` says whether anything needs
action (the command's exit status).
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from ..catalog.base import TableRef
from ..compaction.hms_clean import installed_dirs, why_kept  # the Cleaner's rule, not a copy of it
from ..exceptions import HiveAcidError
from ..metastore.api import client_from_options
from .compat import ENGINES, parse_engines, partition_findings, table_findings
from .health import HEALTHY, NEEDS_ACTION, Thresholds, partition_exceeds
from .hms_findings import MetastoreView
from .planner import would_change
from .scan import TableFacts, scan_table

log = logging.getLogger(__name__)
DEFAULT_CONCURRENCY = 4
Progress = Callable[[str, int], None]  # (what was done, units)


@dataclass
class DoctorSettings:
    thresholds: Thresholds = field(default_factory=Thresholds)
    engines: Sequence[str] = ENGINES
    concurrency: int = DEFAULT_CONCURRENCY
    partitions: str = "flagged"  # which partitions the report lists: "flagged" or "all"


def doctor(refs: Sequence[TableRef], settings: Optional[DoctorSettings] = None,
           progress: Optional[Progress] = None) -> dict[str, Any]:
    """Look at every table of ``refs`` (see the module docstring)."""
    settings = settings or DoctorSettings()
    started = time.time()
    views = metastore_views(refs)
    reports: list[Optional[dict]] = [None] * len(refs)

    def one(i: int) -> None:
        reports[i] = table_report(refs[i], settings, views.get(refs[i].metastore_uri or ""))
        if progress is not None:
            progress(refs[i].display, 1)

    workers = max(1, min(int(settings.concurrency), len(refs) or 1))
    with ThreadPoolExecutor(workers, thread_name_prefix="hiveacid-doctor") as pool:
        list(pool.map(one, range(len(refs))))
    tables = [r for r in reports if r is not None]
    return {
        "tables": tables,
        "summary": _summary(tables),
        "metastores": [v.summary() for v in views.values()],
        "thresholds": settings.thresholds.to_json(),
        "engines": list(settings.engines),
        "needsAction": any(t["verdict"] != HEALTHY for t in tables),
        "durationSeconds": round(time.time() - started, 3),
    }


def doctor_table(ref: TableRef, engines: Optional[Sequence[str] | str] = None,
                 thresholds: Optional[dict[str, Any]] = None, all_partitions: bool = True
                 ) -> dict[str, Any]:
    """One table's report (``HiveAcidTable.doctor()``): every partition listed by default."""
    settings = DoctorSettings(Thresholds().with_overrides(thresholds), parse_engines(engines),
                              partitions="all" if all_partitions else "flagged")
    return table_report(ref, settings, metastore_views([ref]).get(ref.metastore_uri or ""))


def metastore_views(refs: Sequence[TableRef]) -> dict[str, MetastoreView]:
    """One view per metastore the tables live in (read once for all its tables)."""
    out: dict[str, MetastoreView] = {}
    for ref in refs:
        uri = ref.metastore_uri
        if uri and uri not in out:
            with client_from_options(ref.options, uris=uri) as c:
                out[uri] = MetastoreView.load(c)
    return out


def table_report(ref: TableRef, settings: DoctorSettings,
                 view: Optional[MetastoreView] = None) -> dict[str, Any]:
    """One table's report; a table that cannot be looked at is reported with its error."""
    t = settings.thresholds
    try:
        facts = scan_table(ref, small_file_bytes=t.small_file_bytes,
                           small_delta_pct=t.small_delta_pct)
    except HiveAcidError as e:
        log.warning("doctor: %s could not be looked at: %s", ref.display, e)
        return {"table": ref.display, "mode": ref.mode, "verdict": NEEDS_ACTION,
                "reasons": [f"could not be looked at: {type(e).__name__}: {e}"],
                "error": f"{type(e).__name__}: {e}", "partitions": []}
    return report_of(facts, settings, view)


def report_of(facts: TableFacts, settings: DoctorSettings,
              view: Optional[MetastoreView] = None) -> dict[str, Any]:
    """The report of a scanned table (also what ``maintain`` plans from)."""
    reasons: list[str] = []
    parts: list[dict[str, Any]] = []
    compat_count: dict[str, int] = {}
    fixable = 0
    totals = {k: 0 for k in ("activeDeltas", "obsoleteDeltas", "obsoleteBytes", "aborted",
                             "abortedBytes", "files", "bytes", "smallFiles", "originalFiles")}
    decisions = {"major": 0, "minor": 0}
    totals["maxActiveDeltas"] = max((p.active_deltas for p in facts.partitions), default=0)
    for p in facts.partitions:
        exceeds = partition_exceeds(p, settings.thresholds)
        findings = partition_findings(p.evidence, settings.engines)
        entry = p.to_json()
        for k in totals:
            if k != "maxActiveDeltas":
                totals[k] += entry[k]
        if p.decision.get("decision") in decisions:
            decisions[p.decision["decision"]] += 1
        for f in findings:
            compat_count.setdefault(f"{f['engine']}:{f['rule']}", 0)
            compat_count[f"{f['engine']}:{f['rule']}"] += 1
            fixable += bool(f["fix"])
        flagged = bool(exceeds or findings)
        if flagged or settings.partitions == "all":
            entry.update(exceeds=exceeds, compatibility=findings,
                         verdict=NEEDS_ACTION if flagged else HEALTHY)
            parts.append(entry)
    n_exceed = sum(1 for e in parts if e.get("exceeds"))
    totals["partitionsExceeding"] = n_exceed
    if n_exceed:
        reasons.append(f"{n_exceed} partition(s) exceed Hive's delta thresholds (HIVE-24974)")
    if fixable:
        flagged_parts = sum(1 for e in parts if any(f["fix"] for f in e.get("compatibility", [])))
        reasons.append(f"{flagged_parts} partition(s) have layouts other engines misread or "
                       f"refuse ({', '.join(sorted(compat_count))})")
    if facts.property_error:
        reasons.append(facts.property_error)
    report: dict[str, Any] = {
        "table": facts.name, "mode": facts.ref.mode, "location": facts.location,
        "kind": facts.kind, "snapshot": facts.snapshot,
        "partitionColumns": facts.partition_columns, "partitionCount": len(facts.partitions),
        "totals": totals, "compactIfNeeded": decisions,
        "compatibility": {"partitions": compat_count,
                          "table": table_findings(facts.kind == "full-acid", settings.engines)},
        "partitions": parts,
        "scan": {"listings": facts.lists, "filesOpened": facts.opens},
    }
    if view is not None and facts.ref.full_name:
        db, _, name = facts.ref.full_name.partition(".")
        hms = view.table_findings(db, name)
        report["metastore"] = hms
        # Hive's history keeps failures after the partition was compacted since (by us, or by
        # Hive): they need action only where the partition still needs a compaction
        pending = {p.partition for p in facts.partitions if p.decision.get("decision")
                   or partition_exceeds(p, settings.thresholds)}
        types = {(c.partition or ""): (c.type or "major") for cs in
                 view.stopped_partitions(db, name).values() for c in cs[-1:]}
        for key, what in (("failed", "failed"), ("didNotInitiate", "that did not initiate")):
            still = [c for c in hms[key] if (c["partition"] or "") in pending]
            if still:
                reasons.append(f"{len(still)} compaction(s) {what} in the metastore, of "
                               f"partitions that still need one")
        if hms["stuckWorking"]:
            reasons.append(f"{len(hms['stuckWorking'])} compaction(s) stuck in 'working' longer "
                           f"than hive.compactor.worker.timeout ({view.worker_timeout_s:.0f} s)")
        left = {p.partition for p in facts.partitions
                if p.partition in types and would_change(p, types[p.partition])}
        stopped = [p for p in hms["stoppedPartitions"] if p in left]
        if stopped:
            reasons.append(f"Hive stopped compacting {len(stopped)} partition(s) that need it, "
                           f"after {view.failed_threshold} failures: "
                           f"{', '.join(p or '(table)' for p in stopped[:5])} "
                           "(hiveacid maintain takes them over)")
        report["cleanBlockedBy"] = clean_blockers(facts, view)
    report["verdict"] = NEEDS_ACTION if reasons else HEALTHY
    report["reasons"] = reasons
    return report


def clean_blockers(facts: TableFacts, view: MetastoreView) -> dict[str, str]:
    """Partition -> what keeps its obsolete directories (Hive's Cleaner rule, as our vacuum
    applies it with no retention: ``compaction.hms_clean``). Reads the table's compaction
    install records (a few small files) only when something waits for a clean."""
    waiting = [p for p in facts.partitions if p.obsolete and p.state is not None]
    if not waiting:
        return {}
    fs, location = facts.ref.location()
    installs = installed_dirs(fs, location)
    db, _, name = (facts.ref.full_name or "").partition(".")
    locks = [lk for lk in view.locks if (lk.db or "").lower() == db
             and (lk.table or "").lower() == name]
    out = {}
    for p in waiting:
        if p.state is None:
            continue
        why = why_kept(p.state, installs, view.txns.open_ids, locks, view.now, 0.0)
        if why:
            out[p.partition or "(table)"] = why
    return out


def _summary(tables: list[dict]) -> dict[str, Any]:
    return {
        "tables": len(tables),
        "tablesNeedingAction": sum(1 for t in tables if t["verdict"] != HEALTHY),
        "tablesWithErrors": sum(1 for t in tables if "error" in t),
        "partitions": sum(t.get("partitionCount", 0) for t in tables),
        "partitionsFlagged": sum(1 for t in tables for p in t.get("partitions", [])
                                 if p.get("verdict") == NEEDS_ACTION),
        "obsoleteBytes": sum(t.get("totals", {}).get("obsoleteBytes", 0) for t in tables),
        "abortedBytes": sum(t.get("totals", {}).get("abortedBytes", 0) for t in tables),
    }
