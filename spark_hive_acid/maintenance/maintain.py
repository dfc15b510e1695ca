"""``maintain``: the warehouse-wide compactor (docs/maintenance.md).

1. **Plan** every table from its listings (``maintenance.scan`` + ``maintenance.planner``),
   ``concurrency`` tables at a time; ``dry_run`` stops here and returns the plan.
2. **Run** the plan, ``concurrency`` tables at a time: each compaction goes through the one
   commit path, ``compaction.runner.compact`` (its own transaction, its claim lock on a
   metastore table, its atomic install), ``batch`` partitions per transaction; then the table's
   ``vacuum`` (``compaction.vacuum.vacuum_table``: the Cleaner's rule on a metastore table).

Safety is the compaction's: a run killed at any moment leaves every table as it was before or
after each committed batch (an interrupted compaction is aborted by the next one, an unfinished
install rolled forward), and a rerun plans again from the listings, so it does what is left.
One table's failure is reported and does not stop the others. Metastore tables: partitions
Hive's compactor has queued or is running are left to it, checked again right before each
compaction; partitions it stopped compacting are taken over once the cause is gone
(``maintenance.takeover``).
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional, Sequence, TextIO

from ..catalog.base import TableRef
from ..compaction.runner import RunUnits, compact, run_locally
from ..compaction.vacuum import vacuum_table
from ..exceptions import HiveAcidError
from ..txn.logmaint import finish_interrupted_installs
from ..metastore.api import client_from_options
from .doctor import DEFAULT_CONCURRENCY as DOCTOR_CONCURRENCY, metastore_views
from .hms_findings import MetastoreView
from .planner import TAKEOVER, Compaction, PlanSettings, TablePlan, plan_table
from ..progress import Progress
from .scan import scan_table
from .takeover import cause_remains

log = logging.getLogger(__name__)
DEFAULT_CONCURRENCY = 2
DEFAULT_RETENTION_HOURS = 168.0


@dataclass
class MaintainSettings(PlanSettings):
    dry_run: bool = False
    concurrency: int = DEFAULT_CONCURRENCY  # tables planned / compacted at once
    retention_hours: float = DEFAULT_RETENTION_HOURS  # vacuum's (docs/compaction.md)
    progress: bool = True
    progress_interval: float = 10.0  # seconds between progress log lines (not on a terminal)


def plan(refs: Sequence[TableRef], settings: MaintainSettings,
         views: Optional[dict[str, MetastoreView]] = None) -> list[TablePlan]:
    """The plan of every table (listings only)."""
    views = metastore_views(refs) if views is None else views
    t = settings.thresholds

    def one(ref: TableRef) -> TablePlan:
        try:
            if not settings.dry_run:  # a compaction that died after its commit: roll forward
                finish_interrupted_installs(*ref.location())
            facts = scan_table(ref, small_file_bytes=t.small_file_bytes,
                               small_delta_pct=t.small_delta_pct)
        except HiveAcidError as e:
            log.warning("maintain: %s could not be planned: %s", ref.display, e)
            return TablePlan(ref.display, ref, error=f"{type(e).__name__}: {e}")
        return plan_table(facts, settings, views.get(ref.metastore_uri or ""))

    # planning lists (I/O): as many tables at once as the doctor looks at
    workers = max(1, min(max(int(settings.concurrency), DOCTOR_CONCURRENCY), len(refs) or 1))
    with ThreadPoolExecutor(workers, thread_name_prefix="hiveacid-plan") as pool:
        return list(pool.map(one, refs))


def maintain(refs: Sequence[TableRef], settings: Optional[MaintainSettings] = None, *,
             run_units: RunUnits = run_locally, parallelism: int = 1,
             stream: Optional[TextIO] = None) -> dict[str, Any]:
    """Plan, then (unless ``settings.dry_run``) run; the report (see the module docstring)."""
    settings = settings or MaintainSettings()
    started = time.time()
    views = metastore_views(refs)
    plans = plan(refs, settings, views)
    planned = time.time()
    report: dict[str, Any] = {"dryRun": settings.dry_run,
                              "planSeconds": round(planned - started, 3)}
    if settings.dry_run:
        report["tables"] = [p.to_json() for p in plans]
    else:
        total = sum(p.partitions + int(p.vacuum) for p in plans)
        bar = Progress("maintain", total, "partitions", stream=stream, enabled=settings.progress,
                       log_every_s=settings.progress_interval)

        def one(p: TablePlan) -> dict[str, Any]:
            return run_table(p, settings, run_units, parallelism, bar)

        with ThreadPoolExecutor(_workers(settings, plans), thread_name_prefix="hiveacid-maintain"
                                ) as pool:
            report["tables"] = list(pool.map(one, plans))
        bar.close()
    tables = report["tables"]
    report["summary"] = {
        "tables": len(tables),
        "partitionsPlanned": sum(p.partitions for p in plans),
        "partitionsCompacted": sum(t.get("partitionsCompacted", 0) for t in tables),
        "tablesFailed": sum(1 for t in tables if t.get("error")),
        "partitionsSkipped": sum(len(t.get("skipped", {})) for t in tables),
    }
    report["ok"] = not report["summary"]["tablesFailed"] and not any(
        t.get("notTakenOver") for t in tables)
    report["durationSeconds"] = round(time.time() - started, 3)
    return report


def _workers(settings: MaintainSettings, items: Sequence[Any]) -> int:
    return max(1, min(int(settings.concurrency), len(items) or 1))


def run_table(p: TablePlan, settings: MaintainSettings, run_units: RunUnits, parallelism: int,
              bar: Progress) -> dict[str, Any]:
    """Run one table's plan; a failure ends this table only."""
    out: dict[str, Any] = {**p.to_json(), "done": [], "partitionsCompacted": 0,
                           "notTakenOver": {}}
    if p.error:
        bar.advance(p.partitions + int(p.vacuum), p.table, failed=True)
        return out
    left = p.partitions + int(p.vacuum)
    try:
        for c in p.compactions:
            parts = _still_ours(p, c, out)
            if parts:
                metrics = compact(p.ref, c.kind, parts, run_units, parallelism)
                out["done"].append({"kind": c.kind, "source": c.source,
                                    "partitions": metrics.get("partitions", []),
                                    "outputs": len(metrics.get("outputs", [])),
                                    "seconds": metrics.get("durationSeconds")})
                out["partitionsCompacted"] += len(metrics.get("partitions", []))
            left -= len(c.partitions)
            bar.advance(len(c.partitions), f"{p.table} {c.kind} x{len(parts)}")
        if p.vacuum:
            v = vacuum_table(p.ref, settings.retention_hours, False)
            out["vacuumed"] = {"removed": v["numRemoved"], "bytes": v["bytesRemoved"],
                               "kept": len(v["kept"])}
            left -= 1
            bar.advance(1, f"{p.table} vacuum")
    except HiveAcidError as e:
        log.warning("maintain: %s failed: %s: %s", p.table, type(e).__name__, e)
        out["error"] = f"{type(e).__name__}: {e}"
        bar.advance(left, p.table, failed=True)
    return out


def _still_ours(p: TablePlan, c: Compaction, out: dict[str, Any]) -> list[str]:
    """``c``'s partitions minus those Hive's compactor took meanwhile (metastore tables) and, for
    a takeover, those whose cause is still there."""
    parts = list(c.partitions)
    if p.ref.full_name and p.ref.metastore_uri:
        db, _, name = p.ref.full_name.partition(".")
        with client_from_options(p.ref.options, uris=p.ref.metastore_uri) as client:
            view = MetastoreView(client.uri or "", client.compactions(db, name))
        busy = {_rel_of(k): v for k, v in view.busy_partitions(db, name).items()}
        for rel in [r for r in parts if r in busy]:
            out["skipped"][rel] = (f"Hive's compactor took it meanwhile ({busy[rel].state}, "
                                   f"id {busy[rel].id})")
            parts.remove(rel)
    if c.source == TAKEOVER:
        for rel in list(parts):
            why = cause_remains(p.ref, rel)
            if why:
                out["notTakenOver"][rel] = why
                parts.remove(rel)
    return parts


def _rel_of(hive_partition: str) -> str:
    """A metastore partition name as compaction names the partition directory (the same for
    partitions below the table's location, the usual case)."""
    return hive_partition
